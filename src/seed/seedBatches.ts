/**
 * How the benchmark seed cuts its messages into batches: each batch is one
 * transaction of a few set-based statements, and stays short (a second or
 * so for 50,000 messages) whatever the shape, because a conversation larger
 * than a batch (the hot one, 500,000 messages) is cut into seq ranges.
 */

/** Messages `from` to `to` (inclusive) of conversation `index`. */
interface SeedSlice {
  index: number;
  from: number;
  to: number;
}

/** One transaction of the seed: slices of one or more conversations. */
export interface SeedBatch {
  slices: SeedSlice[];
  messages: number;
}

/**
 * The batches for conversations whose message counts are `counts` (index i
 * has counts[i] messages), in order, none with more than `maxMessages`
 * messages. Every message is in exactly one batch; a conversation with no
 * messages is in none.
 */
export function seedBatches(counts: readonly number[], maxMessages: number): SeedBatch[] {
  if (!Number.isInteger(maxMessages) || maxMessages < 1) throw new Error(`seedBatches needs a positive whole maxMessages, but got: ${maxMessages}`);
  const batches: SeedBatch[] = [];
  let current: SeedBatch = { slices: [], messages: 0 };
  counts.forEach((count, index) => {
    for (let from = 1; from <= count; ) {
      const room = maxMessages - current.messages;
      const to = Math.min(count, from + room - 1);
      current.slices.push({ index, from, to });
      current.messages += to - from + 1;
      if (current.messages === maxMessages) {
        batches.push(current);
        current = { slices: [], messages: 0 };
      }
      from = to + 1;
    }
  });
  if (current.messages > 0) batches.push(current);
  return batches;
}
