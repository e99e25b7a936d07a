import { sql } from 'drizzle-orm';
import { alias, PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { members, messages } from '../../src/db/schema.ts';
import { inKeyOrder } from '../../src/store/batch.ts';
import { messageKeyString } from '../../src/store/messages.ts';
import { bare, bareList, selectList } from '../../src/store/sqlFragments.ts';
import { statement } from '../../src/store/statement.ts';

const dialect = new PgDialect();
/** A statement's text and parameters, as the runner sends them. */
const render = (query: ReturnType<ReturnType<typeof statement>>) => {
  const { sql: text, params } = dialect.sqlToQuery(query);
  return { sql: text, params };
};

const m = alias(messages, 'm');
const mb = alias(members, 'mb');

describe('A statement built once', () => {
  const page = statement<{ convId: string; seqs: number[]; limit: number }>(
    (v) => sql`select ${m.seq} from ${messages} ${m}
      where ${m.convId} = ${v.convId} and ${m.seq} = any(${v.seqs}::int8[]) and ${m.kind} = ${'text'} limit ${v.limit}`,
  );

  it('renders the schema as quoted names and binds each value where its placeholder stood, constants included', () => {
    expect(render(page({ convId: 'c1', seqs: [1, 2], limit: 3 }))).toEqual({
      sql: `select "m"."seq" from "messages" "m"
      where "m"."conv_id" = $1 and "m"."seq" = any($2::int8[]) and "m"."kind" = $3 limit $4`,
      params: ['c1', [1, 2], 'text', 3],
    });
  });

  it('answers the same text for every call, so PostgreSQL keeps one prepared statement', () => {
    const first = render(page({ convId: 'c1', seqs: [1], limit: 3 }));
    const second = render(page({ convId: 'c2', seqs: [5, 6, 7], limit: 51 }));
    expect(second.sql).toBe(first.sql);
    expect(second.params).toEqual(['c2', [5, 6, 7], 'text', 51]);
  });

  it('binds a value used twice into both of its parameters', () => {
    const twice = statement<{ seq: number }>((v) => sql`select ${v.seq}::int8 as a, ${v.seq}::int8 as b`);
    expect(render(twice({ seq: 7 }))).toEqual({ sql: 'select $1::int8 as a, $2::int8 as b', params: [7, 7] });
  });

  it('binds null, which is a value', () => {
    const nullable = statement<{ days: number | null }>((v) => sql`select ${v.days}::int as days`);
    expect(render(nullable({ days: null })).params).toEqual([null]);
  });

  it('refuses a call that leaves a placeholder without a value', () => {
    const query = statement<{ convId: string }>((v) => sql`select 1 where ${mb.convId} = ${v.convId}`);
    expect(() => query({} as { convId: string })).toThrow('A statement needs a value for `convId`, got undefined.');
  });
});

describe('Select lists and column names from the schema', () => {
  it('names each output column after its field, so rows come as the field names say', () => {
    const list = selectList<{ convId: string; seq: number; joined: string }>({ convId: mb.convId, seq: m.seq, joined: sql<string>`'x'` });
    expect(dialect.sqlToQuery(list).sql).toBe(`"mb"."conv_id" as "convId", "m"."seq" as "seq", 'x' as "joined"`);
  });

  it('gives SET targets and INSERT lists the bare column names', () => {
    expect(dialect.sqlToQuery(sql`${bare(mb.readSeq)} = 1; (${bareList(messages.convId, messages.seq)})`).sql).toBe(
      `"read_seq" = 1; ("conv_id", "seq")`,
    );
  });
});

describe('The batch contract', () => {
  const keys = [
    { convId: 'a', seq: 1 },
    { convId: 'b', seq: 1 },
    { convId: 'a', seq: 2 },
  ];

  it('answers each key at its own index whatever order the rows came in, null where no row answers', () => {
    const rows = [
      { convId: 'a', seq: 2, text: 'second' },
      { convId: 'a', seq: 1, text: 'first' },
    ];
    expect(inKeyOrder(keys, rows, messageKeyString, messageKeyString)).toEqual([
      { convId: 'a', seq: 1, text: 'first' },
      null,
      { convId: 'a', seq: 2, text: 'second' },
    ]);
  });

  it('answers an empty batch with an empty array', () => {
    expect(inKeyOrder([], [], messageKeyString, messageKeyString)).toEqual([]);
  });

  it('spells a message key one way', () => {
    expect(keys.map(messageKeyString)).toEqual(['a:1', 'b:1', 'a:2']);
  });
});
