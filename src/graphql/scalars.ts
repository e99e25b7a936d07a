/** The custom scalars: `Seq` (a non-negative safe integer) and `DateTime` (RFC 3339, years 1 to 9999). */
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { parseDateTime } from '../history/timeRange.ts';

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

/**
 * Only days and times that exist, from year 1 to 9999 (timeRange.ts): a
 * date JavaScript rolls over (February 30) or PostgreSQL cannot read (year
 * 0000) would otherwise reach the database and fail there as our error.
 */
function dateTimeFrom(value: unknown): string {
  if (typeof value === 'string' && parseDateTime(value) !== null) return value;
  throw new GraphQLError(
    `A DateTime must be an RFC 3339 date-time that exists, from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, such as "2026-01-31T12:00:00.000Z", got ${JSON.stringify(value)}.`,
    { extensions: { code: 'BAD_USER_INPUT' } },
  );
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
