/**
 * The database did not answer in time (DATABASE_TIMEOUT_MS), or could not be reached: the work was not done
 * (its transaction rolled back) and may be tried again later. The store throws it; the HTTP edge answers 503
 * UNAVAILABLE with Retry-After, and the background tasks log it and try again at their next round.
 */
export class UnavailableError extends Error {
  override name = 'UnavailableError';

  constructor(
    message: string,
    /** When a client may usefully try again. */
    readonly retryAfterSeconds: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
