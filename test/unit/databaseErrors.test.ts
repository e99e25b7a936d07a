import { describe, expect, it } from 'vitest';
import { classifyDatabaseError, DatabaseTimeoutError, DatabaseUnavailableError } from '../../src/db/errors.ts';
import { createFormatError } from '../../src/graphql/formatError.ts';

const failure = (code: string) => Object.assign(new Error(`failure ${code}`), { code });

describe('Classifying database failures', () => {
  it('calls a cancelled statement (57014) a timeout', () => {
    expect(classifyDatabaseError(failure('57014'))).toBeInstanceOf(DatabaseTimeoutError);
  });

  it.each(['ECONNREFUSED', 'CONNECTION_CLOSED', 'CONNECT_TIMEOUT', '57P01', '08006'])('calls %s an unavailable database', (code) => {
    expect(classifyDatabaseError(failure(code))).toBeInstanceOf(DatabaseUnavailableError);
  });

  it('leaves other errors as they are', () => {
    const unique = failure('23505');
    const plain = new Error('no code');
    expect([classifyDatabaseError(unique), classifyDatabaseError(plain), classifyDatabaseError('text')]).toEqual([unique, plain, 'text']);
  });
});

describe('Answering database failures', () => {
  const logged: unknown[] = [];
  const format = createFormatError((error) => logged.push(error));
  const internal = { message: 'x', path: ['conversation'], extensions: { code: 'INTERNAL_SERVER_ERROR' } };

  it('answers TIMEOUT and SERVICE_UNAVAILABLE with their own codes, not as bugs', () => {
    expect([
      format(internal, new DatabaseTimeoutError('canceling statement due to statement timeout')).extensions,
      format(internal, new DatabaseUnavailableError('connect ECONNREFUSED')).extensions,
    ]).toEqual([{ code: 'TIMEOUT' }, { code: 'SERVICE_UNAVAILABLE' }]);
    expect(logged).toEqual([]);
  });
});
