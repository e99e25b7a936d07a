/**
 * Which worker process stores a conversation's sends. With several workers
 * on one PostgreSQL, each process grouped only its own sends (the send
 * coalescer), so two processes sending into one busy conversation took its
 * row lock in turn with half-full statements: 0.8 statements per send
 * against 0.42 with one worker, and two to three times PostgreSQL's CPU per
 * send (issue 15's note, `npm run bench:cpu -- send-hot 3 8 2`). Every send
 * to a conversation goes to one worker instead, which groups them all.
 *
 * A hash of the conversation id, not a table: every worker computes the
 * same owner with nothing shared but the worker count.
 */

/** The slot (0 to `workers` - 1) of the worker that stores the sends of `convId`. */
export function sendOwnerSlot(convId: string, workers: number): number {
  // FNV-1a over the id's UTF-16 code units: uuids are hex, so this spreads them evenly.
  let hash = 0x811c9dc5;
  for (let i = 0; i < convId.length; i++) {
    hash ^= convId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % workers;
}
