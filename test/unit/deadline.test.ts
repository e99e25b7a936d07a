import { describe, expect, it } from 'vitest';
import { withDeadline } from '../../src/db/deadline.ts';
import { DatabaseNoAnswerError, DatabaseUnavailableError } from '../../src/db/errors.ts';

const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('withDeadline', () => {
  it('answers the work when it finishes in time, without withdrawing it', async () => {
    let withdrawn = false;
    await expect(withDeadline(after(5, 'rows'), 200, () => (withdrawn = true))).resolves.toBe('rows');
    expect(withdrawn).toBe(false);
  });

  it('passes the work’s own failure through unchanged', async () => {
    const failure = new Error('syntax error');
    await expect(withDeadline(Promise.reject(failure), 200, () => undefined)).rejects.toBe(failure);
  });

  it('answers DatabaseNoAnswerError, a DatabaseUnavailableError, once the deadline passes, and withdraws the work', async () => {
    let withdrawn = false;
    const result = withDeadline(after(5_000, 'rows'), 30, () => (withdrawn = true));
    await expect(result).rejects.toBeInstanceOf(DatabaseNoAnswerError);
    await expect(result).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(result).rejects.toThrow('did not answer within 30 ms');
    expect(withdrawn).toBe(true);
  });
});
