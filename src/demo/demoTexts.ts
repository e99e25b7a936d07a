/**
 * The demo's conversation, as pure data: who is in it, and the text and
 * sender of each message, the same on every run. Mixed Chinese and English,
 * so paging, jumps and search have something real to show.
 */

/** The demo's two users; the first owns the group and gets the Sandbox's token. */
export const DEMO_USERS = ['alice', 'bob'] as const;

/** The group's title. */
export const DEMO_GROUP_TITLE = '周末计划 / Weekend plans';

/** Messages in the group. */
export const DEMO_GROUP_MESSAGES = 1000;

/** Seqs of group messages the owner revokes, so placeholders show up on a few pages. */
export const DEMO_REVOKED_SEQS = [37, 211, 480, 702, 955, 993];

/** Minutes between consecutive group messages: 1,000 messages span about a week. */
export const DEMO_MINUTES_APART = 10;

const LINES = [
  '周末去爬山吗？', 'Anyone up for hiking this weekend?', '好啊，天气预报说周六是晴天', 'Saturday works for me',
  '我们几点出发？', 'How about 8am at the subway station?', '太早了吧 😂', 'ok, 9am then',
  '记得带水和防晒霜', "I'll bring snacks 🍪", '山顶的风景一定很好', 'did you book the train tickets?',
  '票已经买好了，G102 次', 'great, thanks!', '晚上回来一起吃火锅？', 'hotpot sounds perfect',
  '这家店要排队，我先去拿号', 'see you there', '今天走了两万步', 'my legs are dead 😅',
  '照片发群里了', 'the view from the top was amazing', '下次去海边吧', 'beach trip next month?',
  '我查一下酒店', 'let me check my calendar', '收到', '👍',
  '别忘了周报', 'the release is out, by the way', '消息漫游已经上线了', 'GraphQL 游标分页 works nicely',
];

/** The text of group message `seq` (1-based). */
export function demoText(seq: number): string {
  const line = LINES[(seq * 7) % LINES.length]!;
  // Every fifth message is two lines, so texts vary in length.
  return seq % 5 === 0 ? `${line} ${LINES[(seq * 11 + 3) % LINES.length]!}` : line;
}

/** Who sent group message `seq`: runs of a few messages each, as people chat. */
export function demoSender(seq: number): (typeof DEMO_USERS)[number] {
  return Math.floor(seq / 3) % 2 === 0 ? DEMO_USERS[0] : DEMO_USERS[1];
}

/** The direct conversation's messages, in order, with their senders. */
export const DEMO_DIRECT_MESSAGES: { sender: (typeof DEMO_USERS)[number]; text: string }[] = [
  { sender: 'bob', text: 'Hi Alice, 明天的会议改到下午三点了' },
  { sender: 'alice', text: '好的，谢谢提醒！' },
  { sender: 'bob', text: 'Can you send me the slides before that?' },
  { sender: 'alice', text: 'Sure, 我今晚发给你' },
  { sender: 'bob', text: '👍' },
];
