import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createFormatError } from '../../src/graphql/formatError.ts';

describe('Formatting errors for clients', () => {
  it('answers an unexpected error with a generic INTERNAL_SERVER_ERROR and logs the original', () => {
    const logged: unknown[] = [];
    const format = createFormatError((error) => logged.push(error));
    const original = new Error('relation "messages" does not exist at position 42');
    const formatted = format(
      { message: original.message, path: ['conversation'], extensions: { code: 'INTERNAL_SERVER_ERROR', stacktrace: ['Error: ...', '    at x'] } },
      original,
    );
    expect(formatted).toEqual({
      message: 'Something went wrong on the server; it has been logged.',
      locations: undefined,
      path: ['conversation'],
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    expect(logged).toEqual([original]);
  });

  it('passes a client error through with its code and argument, without a stack trace', () => {
    const logged: unknown[] = [];
    const format = createFormatError((error) => logged.push(error));
    const error = new GraphQLError('Argument `first` must be between 1 and 100, got 500.', {
      extensions: { code: 'BAD_USER_INPUT', argumentName: 'first' },
    });
    const formatted = format({ message: error.message, extensions: { ...error.extensions, stacktrace: ['at x'] } }, error);
    expect(formatted).toEqual({ message: error.message, extensions: { code: 'BAD_USER_INPUT', argumentName: 'first' } });
    expect(logged).toEqual([]);
  });

  it('treats an error with no code as unexpected', () => {
    const format = createFormatError(() => {});
    expect(format({ message: 'secret detail' }, new Error('secret detail')).extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR' });
  });
});
