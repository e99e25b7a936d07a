import { describe, expect, it } from 'vitest';
import { serializeError } from '../../src/log.ts';

/** An error shaped as PGlite's, with every field it carries. */
function pgliteShaped(fields: Record<string, unknown>) {
  return Object.assign(new Error(String(fields.message ?? '')), { name: 'error', severity: 'ERROR', ...fields });
}

describe('serializeError', () => {
  it('keeps the fields that name the failure and drops every field that can carry values or SQL', () => {
    const error = pgliteShaped({
      message: 'new row for relation "t" violates check constraint "c"',
      code: '23514',
      routine: 'ExecConstraints',
      file: 'execMain.c',
      line: '2034',
      schema: 'public',
      table: 't',
      constraint: 'c',
      detail: 'Failing row contains (secret).',
      hint: 'secret',
      where: "unnamed portal parameter $1 = 'secret'",
      internalQuery: 'select secret',
      position: '7',
      query: 'insert into t values ($1)',
      params: ['secret'],
    });
    const { stack, ...rest } = serializeError(error) as Record<string, unknown>;
    expect({ ...rest, stackStartsWithMessage: String(stack).split('\n')[0]!.endsWith(': new row for relation "t" violates check constraint "c"') }).toEqual({
      type: 'Error',
      name: 'error',
      message: 'new row for relation "t" violates check constraint "c"',
      severity: 'ERROR',
      code: '23514',
      routine: 'ExecConstraints',
      file: 'execMain.c',
      line: '2034',
      schema: 'public',
      table: 't',
      constraint: 'c',
      stackStartsWithMessage: true,
    });
  });

  it("logs postgres.js's snake_case names under the same names as PGlite's", () => {
    const error = Object.assign(new Error('x'), { constraint_name: 'c', table_name: 't', column_name: 'k', schema_name: 'public', data_type_name: 'int4' });
    expect(serializeError(error)).toMatchObject({ constraint: 'c', table: 't', column: 'k', schema: 'public', dataType: 'int4' });
  });

  it('replaces every bound value in the message and stack, quoted or bare, and reads non-enumerable parameters', () => {
    const error = new Error('value "ab" refused; secret-text and 42 and 1234567 appear');
    Object.defineProperty(error, 'parameters', { value: ['ab', 'secret-text', 1234567, 42], enumerable: false });
    const logged = serializeError(error) as { message: string; stack: string };
    expect([logged.message, logged.stack.split('\n')[0]]).toEqual([
      'value "[bound value]" refused; [bound value] and 42 and [bound value] appear',
      'Error: value "[bound value]" refused; [bound value] and 42 and [bound value] appear',
    ]);
  });

  it('blanks whatever a data exception quotes, bound or not', () => {
    const error = pgliteShaped({ message: 'invalid input syntax for type timestamp with time zone: "2026-02-30 x"', code: '22007' });
    expect((serializeError(error) as { message: string }).message).toBe('invalid input syntax for type timestamp with time zone: "…"');
  });

  it('follows causes, redacting the values bound in any of them', () => {
    const cause = pgliteShaped({ message: 'invalid input syntax for type integer: "hidden-value"', code: '22P02', params: ['hidden-value'] });
    const wrapped = new Error('invalid input syntax for type integer: "hidden-value"', { cause });
    const logged = serializeError(wrapped) as { message: string; cause: { code: string; message: string } };
    expect([logged.message, logged.cause.code, logged.cause.message, JSON.stringify(logged).includes('hidden-value')]).toEqual([
      'invalid input syntax for type integer: "[bound value]"',
      '22P02',
      'invalid input syntax for type integer: "[bound value]"',
      false,
    ]);
  });

  it('passes anything that is not an object through', () => {
    expect([serializeError('text'), serializeError(undefined), serializeError(null)]).toEqual(['text', undefined, null]);
  });
});
