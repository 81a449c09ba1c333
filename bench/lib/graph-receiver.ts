import { randomBytes } from 'node:crypto';
import { startJsonReceiver, type JsonReceiver } from './json-receiver.js';

/**
 * Meta's Graph API as the bench's `meta` provider reaches it: a local receiver of `POST /{version}/{phone id}/messages`
 * that notes when each number's message arrived and answers as the Cloud API does (`messages[0].id`, a wamid).
 * Prism (the tests' validating peer) would measure itself here, not the service: its validation costs more than
 * the service's whole send. The request's shape is what the tests check against Meta's own description.
 */
export type GraphReceiver = JsonReceiver; // arrivals by `+<to>`

export function startGraphReceiver(): Promise<GraphReceiver> {
  return startJsonReceiver((_path, body) => {
    const to = typeof body?.to === 'string' ? body.to : '';
    const wamid = `wamid.${randomBytes(12).toString('base64url')}`;
    return {
      key: to ? `+${to}` : null,
      body: { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: wamid }] },
    };
  });
}
