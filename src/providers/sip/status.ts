import type { SendResult } from '../../channels/provider-port.js';

/** Final answers after which a later try through this trunk may pass: the trunk or the network was in trouble. */
const transientStatuses = new Set([
  408, // Request Timeout: nobody answered in the network's time
  491, // Request Pending: a glare; a new INVITE may pass
  500, // Server Internal Error
  502, // Bad Gateway
  503, // Service Unavailable (overload, maintenance)
  504, // Server Time-out
]);

/**
 * What a final failure answer to the INVITE means for the send, before the phone rang (CONTRACT.md section 8):
 * busy, unknown, unreachable or refused (486, 600, 603, 404, 480, 403, 410, 484, 604, any other 4xx, 3xx
 * redirects, which a trunk should not send) are permanent; 408, 491 and the 5xx of a trunk in trouble are
 * transient. 501, 505 and 513 are 5xx that say our request's form is refused, so retrying it cannot help.
 * The reason carries the status and the trunk's phrase, made safe to log.
 */
export function finalFailure(status: number, phrase: string, retryAfter: string | null): SendResult {
  const reason = `trunk answered ${status} ${safePhrase(phrase)}`.trim();
  if (!transientStatuses.has(status)) return { kind: 'permanent', reason };
  const seconds = retryAfter === null ? null : /^\s*(\d{1,6})/.exec(retryAfter)?.[1];
  return seconds ? { kind: 'transient', reason, retryAfterSeconds: Number(seconds) } : { kind: 'transient', reason };
}

/** A peer's reason phrase as a log can hold it: printable ASCII, at most 80 characters. */
export function safePhrase(phrase: string): string {
  return phrase.replace(/[^\x20-\x7e]/g, '?').slice(0, 80);
}
