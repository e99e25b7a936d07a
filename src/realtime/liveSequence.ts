/**
 * One conversation's live events as a hub receives them: put back in order,
 * and audited against the database so a notice that never came is noticed.
 * A pure rule (no I/O, no clock of its own); hub.ts feeds it.
 *
 * Why order needs restoring: notices are published after commit, by the
 * process that made the write, in batches (src/store/publisher.ts). Two
 * sends into one conversation commit in seq order (the conversation's row
 * lock orders them), but their notices may reach a hub the other way round:
 * from two processes, or from one process whose two connections answered
 * out of turn. So every send is held until the one before it has been
 * delivered (seqs are dense: each seq is exactly one send), and a notice
 * about messages (revoke, purge, read cursor) until the send of the newest
 * message it names. Sends therefore reach subscribers in seq order, which is
 * their commit order, and nothing reaches them before the message it is
 * about. Revokes and purges of other messages commute with sends (each event
 * names its messages, and a subscriber's view is read when it is delivered),
 * so they are not held behind later sends.
 *
 * Why auditing: a notice is lost if its process dies between commit and
 * publication (or the publication fails). The hub asks the database where
 * the conversation stands (`observe`); whatever it showed must have been
 * delivered within a grace period (`audit`), or the conversation's
 * subscribers are told they missed events and reconnect to catch up.
 */
import type { Notice } from '../store/notify.ts';
import type { LiveHead } from '../store/liveHeads.ts';

/** Held notices past which the wait for a missing one is given up at once. */
const MAX_HELD = 10_000;

/** The highest seq whose send must have been delivered before `notice` may be. */
function awaits(notice: Notice): number {
  switch (notice.kind) {
    case 'sent':
      return notice.seq - 1;
    case 'revoked':
    case 'edited':
    case 'reacted':
    case 'pinned':
    case 'unpinned':
    case 'read':
      return notice.seq;
    case 'purged':
      return notice.toSeq;
    case 'member':
      return 0;
  }
}

/** What the database showed, to be delivered by `at` plus the grace period. */
interface Owed {
  maxSeq: number;
  changeSeq: number;
  /** Announced change entries above the floor at the time. */
  announced: number[];
  at: number;
}

/**
 * One conversation's order and audit. Until its first `observe` (its
 * starting point) everything it receives is held; after that, a send is
 * delivered in its seq's turn, and any notice about messages at or below
 * the starting point at once (it was committed before then).
 */
export class LiveSequence {
  /** The seq whose send is delivered next; null until the starting point is known. */
  private next: number | null = null;
  /** Notices waiting for their turn, in arrival order. */
  private held: Notice[] = [];
  /** Announced change entries at or below this number need no more checking. */
  private changeFloor = 0;
  /** Announced change entries received, above `changeFloor`. */
  private readonly told = new Set<number>();
  private owed: Owed | null = null;

  /** What the audit asks the database for: entries after this number; null before the starting point. */
  get afterChangeSeq(): number | null {
    return this.next === null ? null : this.changeFloor;
  }

  /** Whether the starting point is known. */
  get started(): boolean {
    return this.next !== null;
  }

  /** Takes a received notice; answers the notices now deliverable, in order (often just this one). */
  receive(notice: Notice): Notice[] {
    if (notice.changeSeq !== null && notice.changeSeq > this.changeFloor) this.told.add(notice.changeSeq);
    // Every held notice awaits a send not delivered yet: only a notice whose
    // turn has come can release any, so a hole costs no sorting per arrival.
    if (this.next === null || awaits(notice) >= this.next) {
      this.held.push(notice);
      return [];
    }
    if (this.held.length === 0) {
      if (notice.kind === 'sent' && notice.seq === this.next) this.next += 1;
      return [notice];
    }
    this.held.push(notice);
    return this.release();
  }

  /**
   * Takes the database's answer (`head`: null when the conversation does not
   * exist) read at `now`. The first answer is the starting point and
   * answers the held notices it releases; later ones are what must be
   * delivered by `now` plus the grace period.
   */
  observe(head: LiveHead | null, now: number): Notice[] {
    const { maxSeq, changeSeq, announced } = head ?? { maxSeq: 0, changeSeq: 0, announced: [] };
    if (this.next === null) {
      this.next = maxSeq + 1;
      this.changeFloor = changeSeq;
      for (const seq of this.told) if (seq <= changeSeq) this.told.delete(seq);
      return this.release();
    }
    this.owed ??= { maxSeq, changeSeq, announced: announced.filter((seq) => seq > this.changeFloor), at: now };
    return [];
  }

  /**
   * Compares what the database showed at least `graceMs` before `now` with
   * what was delivered: null when everything came (or it is too early to
   * say), or why the subscribers missed events.
   */
  audit(now: number, graceMs: number): string | null {
    if (this.held.length > MAX_HELD) return `${this.held.length} notices waited for one that did not come`;
    const owed = this.owed;
    if (owed === null || this.next === null || now - owed.at < graceMs) return null;
    if (this.next <= owed.maxSeq) return `message ${this.next} was committed and not announced within ${graceMs} ms`;
    const missing = owed.announced.find((seq) => !this.told.has(seq));
    if (missing !== undefined) return `change ${missing} was committed and not announced within ${graceMs} ms`;
    this.owed = null;
    this.changeFloor = Math.max(this.changeFloor, owed.changeSeq);
    for (const seq of this.told) if (seq <= this.changeFloor) this.told.delete(seq);
    return null;
  }

  /** Delivers the held notices whose turn has come, in turn order (arrival order among equals). */
  private release(): Notice[] {
    if (this.next === null) return [];
    // A stable sort: notices awaiting the same send keep their arrival order.
    const waiting = this.held.sort((a, b) => awaits(a) - awaits(b));
    let i = 0;
    const out: Notice[] = [];
    for (; i < waiting.length && awaits(waiting[i]!) < this.next; i++) {
      const notice = waiting[i]!;
      if (notice.kind === 'sent' && notice.seq === this.next) this.next += 1;
      out.push(notice);
    }
    this.held = waiting.slice(i);
    return out;
  }
}
