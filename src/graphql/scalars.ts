/** The custom scalars: `Seq` (a non-negative safe integer) and `DateTime` (ISO 8601). */
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

function seqFrom(value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw new GraphQLError(`A Seq must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(value)}.`, {
    extensions: { code: 'BAD_USER_INPUT' },
  });
}

export const SeqScalar = new GraphQLScalarType<number, number>({
  name: 'Seq',
  serialize: (value) => seqFrom(value),
  parseValue: (value) => seqFrom(value),
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.INT) {
      throw new GraphQLError('A Seq literal must be a whole number.', { extensions: { code: 'BAD_USER_INPUT' } });
    }
    return seqFrom(Number(ast.value));
  },
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

function dateTimeFrom(value: unknown): string {
  if (typeof value === 'string' && ISO.test(value) && !Number.isNaN(Date.parse(value))) return value;
  throw new GraphQLError(`A DateTime must be an ISO 8601 string such as "2026-01-31T12:00:00.000Z", got ${JSON.stringify(value)}.`, {
    extensions: { code: 'BAD_USER_INPUT' },
  });
}

/**
 * Times are formatted by PostgreSQL as ISO strings (`isoTime` in the store),
 * so serializing passes strings through unchecked: it runs once per edge.
 */
export const DateTimeScalar = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  serialize: (value) => (typeof value === 'string' ? value : value instanceof Date ? value.toISOString() : dateTimeFrom(value)),
  parseValue: (value) => dateTimeFrom(value),
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) {
      throw new GraphQLError('A DateTime literal must be a string.', { extensions: { code: 'BAD_USER_INPUT' } });
    }
    return dateTimeFrom(ast.value);
  },
});
