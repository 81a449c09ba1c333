import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { CallbackRequest, CallbackResult, DeliveryReceipt } from '../../channels/provider-port.js';
import { asObject, isPrintableId, jsonObject, nonEmptyString } from '../http-provider.js';

/**
 * The Telegram Gateway's delivery reports (contract 19; core.telegram.org/gateway/api, "Report delivery" and
 * "Checking report integrity"): a POST of a RequestStatus object to the send's `callback_url`, signed with
 * `X-Request-Timestamp` (Unix seconds) and `X-Request-Signature`: the hex HMAC-SHA-256 of
 * `timestamp + "\n" + body`, keyed by the raw SHA-256 digest of the API token.
 */

/** How far a report's timestamp may be from our clock, either way: a replay older than this is refused. */
export const maxReportSkewMs = 5 * 60 * 1000;

/** The signature the Gateway puts on a report of `body` made at `timestamp` (Unix seconds, as sent). */
export function gatewaySignature(token: string, timestamp: string, body: Buffer | string): string {
  const key = createHash('sha256').update(token).digest();
  return createHmac('sha256', key).update(`${timestamp}\n`).update(body).digest('hex');
}

/** Why a report's signature is refused, or null when it is the Gateway's and fresh. */
export function reportSignatureProblem(token: string, headers: CallbackRequest['headers'], rawBody: Buffer, now: Date): string | null {
  const timestamp = headers['x-request-timestamp']?.trim() ?? '';
  const signature = headers['x-request-signature']?.trim().toLowerCase() ?? '';
  if (!/^\d{1,12}$/.test(timestamp) || !/^[0-9a-f]{64}$/.test(signature)) return 'X-Request-Timestamp or X-Request-Signature is missing or malformed';
  const expected = Buffer.from(gatewaySignature(token, timestamp, rawBody), 'hex');
  if (!timingSafeEqual(Buffer.from(signature, 'hex'), expected)) return 'X-Request-Signature does not match TELEGRAM_GATEWAY_TOKEN';
  if (Math.abs(now.getTime() - Number(timestamp) * 1000) > maxReportSkewMs) return 'X-Request-Timestamp is stale';
  return null;
}

/**
 * `delivery_status.status` -> our receipt status, as WhatsApp's read and failed map: read is delivered, and a
 * message that expired unread or was revoked before it arrived never reached the user.
 */
const receiptStatuses: Readonly<Record<string, DeliveryReceipt['status']>> = {
  sent: 'SENT',
  delivered: 'DELIVERED',
  read: 'DELIVERED',
  expired: 'UNDELIVERED',
  revoked: 'UNDELIVERED',
};

/** A signed report as a receipt; a report with no delivery status (a verification status only) is none. */
export function gatewayReportReceipts(request: CallbackRequest, token: string, now: Date): CallbackResult {
  if (request.method.toUpperCase() !== 'POST') return { kind: 'forbidden', reason: 'Gateway reports are POSTs' };
  const problem = reportSignatureProblem(token, request.headers, request.rawBody, now);
  if (problem !== null) return { kind: 'forbidden', reason: problem };
  const body = jsonObject(request.rawBody);
  const id = body?.request_id;
  if (body === null || !isPrintableId(id)) return { kind: 'malformed', reason: 'not a RequestStatus (no request_id)' };
  const delivery = asObject(body.delivery_status);
  const word = nonEmptyString(delivery?.status);
  const status = word === null ? undefined : receiptStatuses[word];
  if (status === undefined) return { kind: 'receipts', receipts: [] };
  const updatedAt = delivery?.updated_at;
  const at = typeof updatedAt === 'number' && Number.isInteger(updatedAt) && updatedAt > 0 ? new Date(updatedAt * 1000) : null;
  // The Gateway refunds a message not delivered within its ttl (`expired`), and says so in `is_refunded`.
  const refunded = body.is_refunded === true || word === 'expired';
  return { kind: 'receipts', receipts: [{ messageId: id, status, detail: word, at, ...(refunded && { refunded }) }] };
}
