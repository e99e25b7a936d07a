/**
 * The texts of the benchmark messages: 20 to 200 characters mixing Chinese
 * and English, made of 2 to 10 of 30 fragments chosen by the message's seq.
 * Message `seq` of every conversation reads `benchText(seq)`. The choice
 * depends on seq only modulo 30 (which fragments) and 9 (how many), so there
 * are `BENCH_TEXT_PERIOD` (90) texts in all: the seed tokenizes each once per
 * conversation instead of once per message.
 */

// Fragments that texts are made of: Chinese, English and mixed, so texts are realistic for search.
const FRAGMENTS = [
  '好的，明天见', 'see you tomorrow', '消息漫游已经上线了', 'the release is out', 'GraphQL 游标分页',
  '我们下午三点开会', 'can you review my PR?', '这个问题我来看一下', 'lunch at noon?', '数据库迁移完成',
  'deploying to staging now', '谢谢大家的支持', 'ok 👍', '周末去爬山吗', 'the build is green again',
  '客户反馈说加载太慢', 'let me check the logs', '历史消息同步有延迟', 'merged, thanks!', '晚上一起吃饭',
  'PostgreSQL keyset pagination', '请把文档发给我', 'on my way', '服务器重启了一次', 'happy birthday 🎉',
  '这周的周报写好了吗', 'latency p99 looks fine', '新版本修复了撤回的问题', 'who is on call today?', '收到',
];

/** Texts repeat with this period in seq: `benchText(seq) === benchText(seq % BENCH_TEXT_PERIOD)`. */
export const BENCH_TEXT_PERIOD = 90;

/** The shortest and longest text, in characters (code points). */
const MIN_CHARS = 20;
const MAX_CHARS = 200;

const fragment = (i: number) => FRAGMENTS[i % FRAGMENTS.length]!;
const characters = (text: string) => [...text];

/**
 * The text of message `seq`: the same on every run, and the same as the
 * SQL generator used before (data sets seeded either way compare).
 */
export function benchText(seq: number): string {
  // Ten fragments picked by co-prime steps, of which the first 2 + seq % 9 are used.
  const picks = [[7, 0], [13, 3], [17, 5], [19, 7], [23, 11], [29, 13], [31, 17], [37, 19], [41, 23], [43, 29]] as const;
  const text = picks
    .slice(0, 2 + (seq % 9))
    .map(([step, offset]) => fragment(seq * step + offset))
    .join(' ');
  const padded = characters(text).length < MIN_CHARS ? `${text} · ${fragment(seq)} ${fragment(seq + 1)}` : text;
  return characters(padded).slice(0, MAX_CHARS).join('');
}
