import { describe, expect, it } from 'vitest';
import { BENCH_TEXT_PERIOD, benchText } from '../../src/seed/benchTexts.ts';
import { seedBatches } from '../../src/seed/seedBatches.ts';

describe('Bench seed: batches', () => {
  it('makes no batch for no conversations, or conversations without messages', () => {
    expect(seedBatches([], 10)).toEqual([]);
    expect(seedBatches([0, 0], 10)).toEqual([]);
  });

  it('puts one message in one batch', () => {
    expect(seedBatches([1], 10)).toEqual([{ slices: [{ index: 0, from: 1, to: 1 }], messages: 1 }]);
  });

  it('fills a batch with exactly its size, and starts the next with the message after', () => {
    expect(seedBatches([10], 10)).toEqual([{ slices: [{ index: 0, from: 1, to: 10 }], messages: 10 }]);
    expect(seedBatches([11], 10)).toEqual([
      { slices: [{ index: 0, from: 1, to: 10 }], messages: 10 },
      { slices: [{ index: 0, from: 11, to: 11 }], messages: 1 },
    ]);
  });

  it('cuts a conversation larger than a batch into seq ranges, and packs small ones together', () => {
    expect(seedBatches([25, 4, 4, 0, 4], 10)).toEqual([
      { slices: [{ index: 0, from: 1, to: 10 }], messages: 10 },
      { slices: [{ index: 0, from: 11, to: 20 }], messages: 10 },
      {
        slices: [
          { index: 0, from: 21, to: 25 },
          { index: 1, from: 1, to: 4 },
          { index: 2, from: 1, to: 1 },
        ],
        messages: 10,
      },
      {
        slices: [
          { index: 2, from: 2, to: 4 },
          { index: 4, from: 1, to: 4 },
        ],
        messages: 7,
      },
    ]);
  });

  it('covers every message of the benchmark shape (2,000,000) exactly once, no batch over its size', () => {
    const counts = [500_000, ...Array.from({ length: 1999 }, (_, i) => (i === 0 ? 1500 : 750))];
    const batches = seedBatches(counts, 25_000);
    expect(batches.every((b) => b.messages <= 25_000 && b.messages === b.slices.reduce((n, s) => n + s.to - s.from + 1, 0))).toBe(true);
    const covered = counts.map(() => 0);
    for (const { index, from, to } of batches.flatMap((b) => b.slices)) {
      expect(from).toBe(covered[index]! + 1);
      covered[index] = to;
    }
    expect(covered).toEqual(counts);
  });

  it('refuses a batch size that is not a positive whole number, echoing it', () => {
    expect(() => seedBatches([1], 0)).toThrow('seedBatches needs a positive whole maxMessages, but got: 0');
    expect(() => seedBatches([1], 2.5)).toThrow('but got: 2.5');
  });
});

describe('Bench seed: texts', () => {
  const seqs = Array.from({ length: 3 * BENCH_TEXT_PERIOD * 7 }, (_, i) => i + 1);

  it('repeats with the period the seed tokenizes by', () => {
    expect(seqs.filter((seq) => benchText(seq) !== benchText(seq % BENCH_TEXT_PERIOD))).toEqual([]);
  });

  it('is 20 to 200 characters long', () => {
    const lengths = seqs.map((seq) => [...benchText(seq)].length);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(20);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(200);
  });

  it('keeps the texts the SQL generator made before (seq 1 to 4, and a padded one)', () => {
    expect([1, 2, 3, 4].map(benchText)).toEqual([
      '这个问题我来看一下 let me check the logs on my way',
      'the build is green again 收到 数据库迁移完成 客户反馈说加载太慢',
      '请把文档发给我 ok 👍 latency p99 looks fine GraphQL 游标分页 PostgreSQL keyset pagination',
      'who is on call today? 这周的周报写好了吗 周末去爬山吗 服务器重启了一次 周末去爬山吗 数据库迁移完成',
    ]);
    expect(benchText(36)).toBe('ok 👍 请把文档发给我 · can you review my PR? 这个问题我来看一下');
  });
});
