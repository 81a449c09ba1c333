import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PrismMock } from '../support/prism.js';
import { startVonageSmsPrism } from '../support/vonage-prism.js';
import { createVonage } from './vonage-fixtures.js';
import { localServer, recordingContext, sampleSms as sms, sendOnce } from './support.js';

/*
 * The real provider against Prism serving Vonage's own description of the SMS API (test/peers/vonage/sms.yml):
 * Prism refuses (422) a request the description does not allow, and answers a valid one with the description's
 * example, whose message-price is "0.03330000". The requests are signed (no VONAGE_API_SECRET): the description
 * knows only credentials in the form (api_key required, with api_secret or sig), not the Authorization header the
 * provider sends with a secret, which the local stand-in in vonage-sms.test.ts checks instead.
 */

describe("vonage SMS against Prism serving Vonage's OpenAPI description of the SMS API", () => {
  let prism: PrismMock;
  // Prism tries the description's delivery-receipt callback to the send's `callback` (5.14 cannot read it from a form
  // body, and gives up): it is a local server's, so that nothing would leave the machine if it could.
  const receipts = localServer((_req, res) => res.end());
  before(async () => {
    prism = await startVonageSmsPrism();
  });
  after(async () => {
    await prism.stop();
  });

  const send = (raw: Record<string, string | undefined>, message = sms) =>
    sendOnce(createVonage({ VONAGE_BASE_URL: prism.url, VONAGE_API_SECRET: undefined, ...raw }, recordingContext(`${receipts.url}/callbacks/vonage`)), message);

  it('sends a signed request Prism finds valid, and reads the message id and message-price in VONAGE_CURRENCY', async () => {
    const result = await send({ VONAGE_CURRENCY: 'gbp' });
    assert.deepEqual(
      result,
      { kind: 'accepted', messageId: '0A0000000123ABCD1', price: { amount: '0.0333', currency: 'GBP' } },
      `${JSON.stringify(result)}\n${prism.output().slice(-3000)}`,
    );
    const unicode = await send({}, { ...sms, text: 'Votre code: 482913 — merci' });
    assert.deepEqual(unicode, { kind: 'accepted', messageId: '0A0000000123ABCD1', price: { amount: '0.0333', currency: 'EUR' } });
  });

  it('Prism does check the request: a SHA-512 signature, longer than the 60 characters the description allows sig, is refused (422, permanent)', async () => {
    // The cap is the description's, not Vonage's (vonage-sms.test.ts): here it only shows that Prism validates.
    const result = await send({ VONAGE_SIGNATURE_METHOD: 'sha512' });
    assert.deepEqual(result, { kind: 'permanent', reason: 'Vonage: unexpected answer (HTTP 422)' });
  });
});
