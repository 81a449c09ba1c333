import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CallbackRequest, CallbackResult, DeliveryReceipt, Provider } from '../../channels/provider-port.js';
import { asObject, isPrintableId, jsonObject, mediaType, nonEmptyString } from '../http-provider.js';

/**
 * Meta's webhooks (contract 13): the subscription handshake (`GET ?hub.mode=subscribe&hub.verify_token=T&hub.challenge=C`)
 * and the `messages` field's status notifications, each POST signed with the app secret
 * (`X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`).
 */

/** The handshake: the challenge to echo when the token is ours, else a refusal. */
export function metaHandshake(request: CallbackRequest, verifyToken: string): ReturnType<NonNullable<Provider['handshake']>> {
  const query = new URL(request.url).searchParams;
  const token = query.get('hub.verify_token');
  const challenge = query.get('hub.challenge');
  if (query.get('hub.mode') !== 'subscribe' || token === null || challenge === null) {
    return { kind: 'forbidden', reason: 'not a subscription handshake (hub.mode, hub.verify_token, hub.challenge)' };
  }
  if (!sameSecret(token, verifyToken)) return { kind: 'forbidden', reason: 'hub.verify_token is not META_WEBHOOK_VERIFY_TOKEN' };
  // Meta sends a number; anything else is not echoed into a response.
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(challenge)) return { kind: 'forbidden', reason: 'hub.challenge is not a plain token' };
  return { kind: 'challenge', body: challenge };
}

/** Whether `X-Hub-Signature-256` is the HMAC-SHA256 of the raw body with the app secret (compared in constant time). */
export function isMetaSignatureValid(appSecret: string, header: string | undefined, rawBody: Buffer): boolean {
  const hex = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '')?.[1];
  if (hex === undefined) return false;
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
}

/** `statuses[].status` -> our receipt status; absent: no delivery outcome. */
const receiptStatuses: Readonly<Record<string, DeliveryReceipt['status']>> = {
  sent: 'SENT',
  delivered: 'DELIVERED',
  read: 'DELIVERED',
  failed: 'UNDELIVERED',
};

/** A signed notification's statuses as receipts; inbound messages and other fields are none of ours. */
export function metaStatusReceipts(request: CallbackRequest, appSecret: string): CallbackResult {
  if (request.method.toUpperCase() !== 'POST') return { kind: 'forbidden', reason: 'Meta notifications are POSTs' };
  if (!isMetaSignatureValid(appSecret, request.headers['x-hub-signature-256'], request.rawBody)) {
    return { kind: 'forbidden', reason: 'X-Hub-Signature-256 is missing or does not match META_APP_SECRET' };
  }
  const body = mediaType(request.headers['content-type']) === 'application/json' ? jsonObject(request.rawBody) : null;
  if (body === null || !Array.isArray(body.entry)) return { kind: 'malformed', reason: 'not a Meta notification (no entry array)' };
  const receipts: DeliveryReceipt[] = [];
  for (const entry of body.entry) {
    const changes = asObject(entry)?.changes;
    if (!Array.isArray(changes)) return { kind: 'malformed', reason: 'an entry without changes' };
    for (const change of changes) {
      const value = asObject(asObject(change)?.value);
      if (value === null) return { kind: 'malformed', reason: 'a change without a value' };
      const statuses = value.statuses;
      if (statuses === undefined) continue;
      if (!Array.isArray(statuses)) return { kind: 'malformed', reason: 'statuses is not an array' };
      for (const item of statuses) {
        const s = asObject(item);
        const id = s?.id;
        const word = nonEmptyString(s?.status);
        if (!isPrintableId(id) || word === null) return { kind: 'malformed', reason: 'a status without id or status' };
        const status = receiptStatuses[word];
        if (status === undefined) continue;
        receipts.push({ messageId: id, status, detail: detailOf(word, s?.errors), at: dateOf(s?.timestamp) });
      }
    }
  }
  return { kind: 'receipts', receipts };
}

/** `failed (131026)`: the status and the first error's code; Meta's titles may name the user, so they are left out. */
function detailOf(word: string, errors: unknown): string {
  const code = Array.isArray(errors) ? asObject(errors[0])?.code : undefined;
  return typeof code === 'number' && Number.isInteger(code) ? `${word} (${code})` : word;
}

/** `timestamp`: Unix seconds as a string. */
function dateOf(value: unknown): Date | null {
  if (typeof value !== 'string' || !/^\d{1,12}$/.test(value)) return null;
  return new Date(Number(value) * 1000);
}

/** Two secrets compared in constant time (their lengths are not secret: hashed first). */
function sameSecret(given: string, expected: string): boolean {
  const hash = (s: string) => createHmac('sha256', 'compare').update(s).digest();
  return timingSafeEqual(hash(given), hash(expected));
}
