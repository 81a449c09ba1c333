/** How the client waits and retries; every wait is bounded (see OtpClientOptions). */
export interface RetryPolicy {
  /** Retries after the first attempt, for any reason (429, 503, a lost connection). */
  readonly maxRetries: number;
  /** The longest single wait; a `Retry-After` beyond it is not waited for: the error is thrown at once. */
  readonly maxWaitMs: number;
}

/** Told of each retry before its wait, e.g. to log it. */
export interface RetryNotice {
  /** The retry about to be made, 1 for the first. */
  readonly retry: number;
  /** `rate-limited` (429), `unavailable` (503), `connection` (no answer) or `token-refused` (401 invalid_token). */
  readonly reason: 'rate-limited' | 'unavailable' | 'connection' | 'token-refused';
  readonly waitMs: number;
  readonly method: string;
  readonly url: string;
}

/** A `Retry-After` value (RFC 9110 10.2.3: delay-seconds or an HTTP date) in milliseconds from `now`; null if absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The wait before retry `retry` (1, 2, ...) when the service named none: 250 ms doubling, with jitter. */
export function backoffMs(retry: number): number {
  const base = 250 * 2 ** Math.min(retry - 1, 6);
  return Math.round(base * (0.5 + Math.random() / 2));
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves like `promise`, or rejects with the signal's reason as soon as it aborts (the promise goes on). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
