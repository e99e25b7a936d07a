import { describe, expect, it } from 'vitest';
import { LIST_SIZES, listSize } from '../../src/history/listSizes.ts';
import { aroundCount, aroundSides, type PageArgs, pageWindow } from '../../src/history/pageWindow.ts';

const AROUND_SIDE_DEFAULT = LIST_SIZES.jumpSide.default;
/** The page-size check of the table, answering null for an accepted size. */
const checkPageSize = (argumentName: string, value: number) => {
  const checked = listSize('messages', argumentName, value);
  return checked.ok ? null : checked.problem;
};
const checkAroundCount = (argumentName: string, value: number) => {
  const checked = aroundCount(argumentName, value);
  return checked.ok ? null : checked.problem;
};

const forward = (size: number, afterSeq: number) => ({ ok: true, window: { direction: 'forward', size, afterSeq } });
const backward = (size: number, beforeSeq: number | null) => ({ ok: true, window: { direction: 'backward', size, beforeSeq } });

/** A refusal naming `argumentName`, whose sentence mentions every argument in `mentions`. */
const refused = (argumentName: string, ...mentions: string[]) => ({
  ok: false,
  problem: { argumentName, message: expect.stringMatching(new RegExp(mentions.map((name) => `\`${name}\``).join('.*'))) },
});

/** The page-size refusal, which names the argument, states the range and echoes the value. */
const badSize = (argumentName: string, value: number) => ({
  argumentName,
  message: `Argument \`${argumentName}\` must be between 1 and 100, got ${value}.`,
});
const badCount = (argumentName: string, value: number) => ({
  argumentName,
  message: `Argument \`${argumentName}\` must be between 0 and 100, got ${value}.`,
});

const OUT_OF_RANGE_SIZES = [0, -1, 101, 500, 1.5, 99.999, Number.NaN, Number.POSITIVE_INFINITY];

describe('Page sizes', () => {
  it('defaults to 20 and allows at most 100', () => {
    expect([LIST_SIZES.messages.default, LIST_SIZES.messages.max]).toEqual([20, 100]);
  });

  it('accepts 1 and 100 and every integer between', () => {
    const sizes = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(sizes.map((size) => checkPageSize('first', size))).toEqual(sizes.map(() => null));
  });

  it('refuses 0, 101, negatives, fractions, NaN and Infinity, naming the argument and echoing the value', () => {
    expect(OUT_OF_RANGE_SIZES.map((value) => checkPageSize('last', value))).toEqual(
      OUT_OF_RANGE_SIZES.map((value) => badSize('last', value)),
    );
  });
});

describe('Page windows: defaults', () => {
  it('answers the newest 20 when no argument is given', () => {
    expect(pageWindow({})).toEqual(backward(20, null));
  });

  it('treats null arguments as absent', () => {
    expect(pageWindow({ first: null, last: null, afterSeq: null, beforeSeq: null })).toEqual(backward(20, null));
  });

  it('pages forward 20 at a time from after alone', () => {
    expect(pageWindow({ afterSeq: 100 })).toEqual(forward(20, 100));
  });

  it('pages backward 20 at a time from before alone', () => {
    expect(pageWindow({ beforeSeq: 100 })).toEqual(backward(20, 100));
  });

  it('treats a cursor at position 0 as a given cursor in either direction', () => {
    expect([pageWindow({ afterSeq: 0 }), pageWindow({ beforeSeq: 0 })]).toEqual([forward(20, 0), backward(20, 0)]);
  });
});

describe('Page windows: first and after', () => {
  it('answers the oldest N for first alone, at 1 and at 100', () => {
    expect([pageWindow({ first: 1 }), pageWindow({ first: 100 })]).toEqual([forward(1, 0), forward(100, 0)]);
  });

  it('answers N after the cursor for first and after', () => {
    expect([pageWindow({ first: 5, afterSeq: 100 }), pageWindow({ first: 100, afterSeq: 1 })]).toEqual([
      forward(5, 100),
      forward(100, 1),
    ]);
  });

  it('keeps the forward direction with null last and before', () => {
    expect(pageWindow({ first: 3, afterSeq: 7, last: null, beforeSeq: null })).toEqual(forward(3, 7));
  });

  it('refuses first of 0, 101, negative, fractional, NaN or Infinity, naming first', () => {
    expect(OUT_OF_RANGE_SIZES.map((first) => pageWindow({ first }))).toEqual(
      OUT_OF_RANGE_SIZES.map((first) => ({ ok: false, problem: badSize('first', first) })),
    );
  });

  it('refuses a bad first with a cursor too, naming first', () => {
    expect(pageWindow({ first: 101, afterSeq: 5 })).toEqual({ ok: false, problem: badSize('first', 101) });
  });
});

describe('Page windows: last and before', () => {
  it('answers the newest N for last alone, at 1 and at 100', () => {
    expect([pageWindow({ last: 1 }), pageWindow({ last: 100 })]).toEqual([backward(1, null), backward(100, null)]);
  });

  it('answers N before the cursor for last and before', () => {
    expect([pageWindow({ last: 5, beforeSeq: 100 }), pageWindow({ last: 100, beforeSeq: 1 })]).toEqual([
      backward(5, 100),
      backward(100, 1),
    ]);
  });

  it('keeps the backward direction with null first and after', () => {
    expect(pageWindow({ last: 3, beforeSeq: 7, first: null, afterSeq: null })).toEqual(backward(3, 7));
  });

  it('refuses last of 0, 101, negative, fractional, NaN or Infinity, naming last', () => {
    expect(OUT_OF_RANGE_SIZES.map((last) => pageWindow({ last }))).toEqual(
      OUT_OF_RANGE_SIZES.map((last) => ({ ok: false, problem: badSize('last', last) })),
    );
  });

  it('refuses a bad last with a cursor too, naming last', () => {
    expect(pageWindow({ last: 0, beforeSeq: 5 })).toEqual({ ok: false, problem: badSize('last', 0) });
  });
});

describe('Page windows: forbidden combinations', () => {
  it('refuses first with last, naming last', () => {
    expect(pageWindow({ first: 5, last: 5 })).toEqual(refused('last', 'first', 'last'));
  });

  it('refuses after with before, naming before', () => {
    expect(pageWindow({ afterSeq: 5, beforeSeq: 10 })).toEqual(refused('before', 'after', 'before'));
  });

  it('refuses first with before, naming before', () => {
    expect(pageWindow({ first: 5, beforeSeq: 10 })).toEqual(refused('before', 'before', 'first'));
  });

  it('refuses last with after, naming after', () => {
    expect(pageWindow({ last: 5, afterSeq: 10 })).toEqual(refused('after', 'after', 'last'));
  });

  it('refuses every combination of three or four arguments, naming the first conflict found', () => {
    const combinations: [PageArgs, string][] = [
      [{ first: 5, last: 5, afterSeq: 1, beforeSeq: 9 }, 'last'],
      [{ first: 5, last: 5, afterSeq: 1 }, 'last'],
      [{ first: 5, last: 5, beforeSeq: 9 }, 'last'],
      [{ first: 5, afterSeq: 1, beforeSeq: 9 }, 'before'],
      [{ last: 5, afterSeq: 1, beforeSeq: 9 }, 'before'],
    ];
    expect(combinations.map(([args]) => pageWindow(args))).toEqual(
      combinations.map(([, argumentName]) => refused(argumentName)),
    );
  });

  it('reports a forbidden combination before a bad size', () => {
    expect([pageWindow({ first: 0, last: 500 }), pageWindow({ first: 500, beforeSeq: 3 }), pageWindow({ last: 0, afterSeq: 3 })]).toEqual(
      [refused('last'), refused('before'), refused('after')],
    );
  });

  it('counts a cursor at position 0 as given when checking combinations', () => {
    expect([pageWindow({ afterSeq: 0, beforeSeq: 0 }), pageWindow({ last: 5, afterSeq: 0 }), pageWindow({ first: 5, beforeSeq: 0 })]).toEqual([
      refused('before'),
      refused('after'),
      refused('before'),
    ]);
  });
});

describe('Page windows of a thread (replies)', () => {
  it('reads the sizes of its own entry in the table: 20 by default, 1 to 100', () => {
    expect(LIST_SIZES.replies).toEqual({ default: 20, min: 1, max: 100 });
  });

  it('answers the newest 20 replies with no argument, and pages both ways like messages', () => {
    expect([
      pageWindow({}, 'replies'),
      pageWindow({ first: 1 }, 'replies'),
      pageWindow({ first: 100, afterSeq: 7 }, 'replies'),
      pageWindow({ last: 100, beforeSeq: 7 }, 'replies'),
      pageWindow({ afterSeq: 7 }, 'replies'),
    ]).toEqual([backward(20, null), forward(1, 0), forward(100, 7), backward(100, 7), forward(20, 7)]);
  });

  it('refuses sizes outside the replies range, naming the argument and echoing the value', () => {
    expect(OUT_OF_RANGE_SIZES.map((first) => pageWindow({ first }, 'replies'))).toEqual(
      OUT_OF_RANGE_SIZES.map((first) => ({ ok: false, problem: badSize('first', first) })),
    );
    expect([pageWindow({ last: 0 }, 'replies'), pageWindow({ last: 101, beforeSeq: 3 }, 'replies')]).toEqual([
      { ok: false, problem: badSize('last', 0) },
      { ok: false, problem: badSize('last', 101) },
    ]);
  });

  it('refuses the same combinations as messages, naming the same argument', () => {
    expect([
      pageWindow({ first: 5, last: 5 }, 'replies'),
      pageWindow({ afterSeq: 5, beforeSeq: 10 }, 'replies'),
      pageWindow({ first: 5, beforeSeq: 10 }, 'replies'),
      pageWindow({ last: 5, afterSeq: 10 }, 'replies'),
    ]).toEqual([refused('last', 'first', 'last'), refused('before', 'after', 'before'), refused('before'), refused('after')]);
  });

  it('answers exactly what messages answers for the same arguments, since both lists share one range today', () => {
    const args: PageArgs[] = [{}, { first: 3 }, { last: 100 }, { first: 0 }, { last: 101 }, { first: 5, afterSeq: 0 }, { first: 1, last: 1 }];
    expect(args.map((a) => pageWindow(a, 'replies'))).toEqual(args.map((a) => pageWindow(a)));
  });
});

describe('messagesAround counts', () => {
  it('accepts 0 and 100 and every integer between, on either side', () => {
    const counts = Array.from({ length: 101 }, (_, i) => i);
    expect(counts.flatMap((count) => [checkAroundCount('before', count), checkAroundCount('after', count)])).toEqual(
      counts.flatMap(() => [null, null]),
    );
  });

  it('refuses -1, 101, fractions, NaN and Infinity, naming the side and echoing the value', () => {
    const values = [-1, 101, 0.5, 100.5, Number.NaN, Number.NEGATIVE_INFINITY];
    expect(values.map((value) => checkAroundCount('before', value))).toEqual(values.map((value) => badCount('before', value)));
    expect(values.map((value) => checkAroundCount('after', value))).toEqual(values.map((value) => badCount('after', value)));
  });
});

describe('messages(around:) sides', () => {
  it('takes last as the older side and first as the newer, like paging backward and forward', () => {
    expect(aroundSides(7, 3)).toEqual({ ok: true, older: 3, newer: 7 });
    expect(aroundSides(0, 100)).toEqual({ ok: true, older: 100, newer: 0 });
  });

  it('gives both sides the default when neither is given, and 0 to the side left out when one is', () => {
    expect(aroundSides(undefined, null)).toEqual({ ok: true, older: AROUND_SIDE_DEFAULT, newer: AROUND_SIDE_DEFAULT });
    expect(aroundSides(20, undefined)).toEqual({ ok: true, older: 0, newer: 20 });
    expect(aroundSides(null, 20)).toEqual({ ok: true, older: 20, newer: 0 });
  });

  it('refuses a side outside 0 to 100, naming the argument', () => {
    expect(aroundSides(101, 5)).toEqual({ ok: false, problem: badCount('first', 101) });
    expect(aroundSides(5, -1)).toEqual({ ok: false, problem: badCount('last', -1) });
  });
});
