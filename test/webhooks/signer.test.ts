import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { cryptoRandom } from '../../src/domain/random.js';
import { newWebhookSecret } from '../../src/oauth/client.js';
import { activeSecrets, signature, signedHeaders, signingKey } from '../../src/webhooks/signer.js';

describe('webhook signer (Standard Webhooks)', () => {
  const body = JSON.stringify({ event: 'action.otp.success', data: { id: 'x' } });
  const id = '0b6c7f0e-2f7a-4d3e-9d55-6a1d1e0e9f00';

  it('produces signatures the standardwebhooks package verifies', () => {
    const secret = newWebhookSecret(cryptoRandom);
    const headers = signedHeaders([secret], id, new Date(), body);
    assert.equal(headers['webhook-id'], id);
    assert.match(headers['webhook-timestamp'], /^\d+$/);
    assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  });

  it('matches the package signature byte for byte', () => {
    const secret = newWebhookSecret(cryptoRandom);
    const at = new Date('2026-11-21T09:30:00.000Z');
    assert.equal(signature(secret, id, Math.floor(at.getTime() / 1000), body), new Webhook(secret).sign(id, at, body));
  });

  it('signs with both secrets while a rotation overlaps, either one verifying', () => {
    const [oldSecret, newSecret] = [newWebhookSecret(cryptoRandom), newWebhookSecret(cryptoRandom)];
    const headers = signedHeaders([newSecret, oldSecret], id, new Date(), body);
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    assert.ok(new Webhook(oldSecret).verify(body, headers));
    assert.ok(new Webhook(newSecret).verify(body, headers));
    const stranger = newWebhookSecret(cryptoRandom);
    assert.throws(() => new Webhook(stranger).verify(body, headers), /No matching signature/);
  });

  it('rejects a tampered body', () => {
    const secret = newWebhookSecret(cryptoRandom);
    const headers = signedHeaders([secret], id, new Date(), body);
    assert.throws(() => new Webhook(secret).verify(body.replace('success', 'failed'), headers));
  });

  it('uses the previous secret only until it expires', () => {
    const now = new Date('2026-11-21T09:30:00.000Z');
    const later = new Date(now.getTime() + 1000);
    const secrets = { current: 'whsec_bmV3', previous: 'whsec_b2xk', previousExpiresAt: later };
    assert.deepEqual(activeSecrets(secrets, now), ['whsec_bmV3', 'whsec_b2xk']);
    assert.deepEqual(activeSecrets(secrets, later), ['whsec_bmV3']);
    assert.deepEqual(activeSecrets({ ...secrets, previous: null, previousExpiresAt: null }, now), ['whsec_bmV3']);
  });

  it('decodes the key after whsec_ as base64', () => {
    assert.deepEqual(signingKey('whsec_AQID'), Buffer.from([1, 2, 3]));
    assert.throws(() => signingKey('whsec_'), /empty/);
  });
});
