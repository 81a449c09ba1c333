import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { Webhook } from 'standardwebhooks';
import type { Harness } from './harness.js';

/** The signature headers of a payload, signed now the Standard Webhooks way (the `http` provider's receipts). */
export function signedReceiptHeaders(wh: Webhook, payload: string): Record<string, string> {
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const timestamp = new Date();
  const signature = wh.sign(id, timestamp, payload);
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': signature };
}

/** A receipt posted to /callbacks/http as the operator's gateway posts it, signed with `secret`. */
export function gatewayReceipt(h: Harness, body: unknown, secret: string): Promise<LightMyRequestResponse> {
  const payload = JSON.stringify(body);
  return h.app.inject({
    method: 'POST',
    url: '/callbacks/http',
    headers: { 'content-type': 'application/json', ...signedReceiptHeaders(new Webhook(secret), payload) },
    payload,
  });
}
