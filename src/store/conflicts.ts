import { UnavailableError } from '../domain/unavailable.js';

/**
 * PostgreSQL ended the transaction to break a deadlock (40P01) or a serialization conflict (40001): nothing of
 * it committed, so running it again is safe, and it will most likely go through.
 */
export function isConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/**
 * Runs `work` again when the database ended it in a conflict, up to `tries` times in all. A conflict that
 * outlasts them is an UnavailableError (503, try again in a second), never an unexpected error.
 */
export async function retryingConflicts<R>(work: () => Promise<R>, tries = 3): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!isConflict(err)) throw err;
      if (attempt >= tries) throw new UnavailableError(`the database ended the work in a conflict ${tries} times`, 1, { cause: err });
    }
  }
}
