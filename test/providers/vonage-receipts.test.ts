import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import type { CallbackRequest, Provider } from '../../src/channels/provider-port.js';
import type { VonageSignatureMethod } from '../../src/providers/vonage-signature.js';
import { apiKey, callbackUrl, createVonage, signatureSecret, signLikeVonage } from './vonage-fixtures.js';

describe('vonage delivery receipts (signed webhooks)', () => {
  const provider = createVonage({});
  const sha256 = createVonage({ VONAGE_SIGNATURE_METHOD: 'sha256' });
  after(async () => {
    await provider.stop();
    await sha256.stop();
  });

  const now = () => String(Math.floor(Date.now() / 1000));
  /** A receipt as the delivery-receipt reference documents it, signed with timestamp and nonce. */
  const receipt = (overrides: Record<string, string> = {}, method: VonageSignatureMethod = 'md5hash'): Record<string, string> => {
    const params: Record<string, string> = {
      msisdn: '2348012345678',
      to: 'Acme',
      'network-code': '62130',
      messageId: '0A0000001234567B',
      price: '0.03330000',
      status: 'delivered',
      scts: '2001011400',
      'err-code': '0',
      'api-key': apiKey,
      'client-ref': 'send-1',
      'message-timestamp': '2020-01-01 12:00:00',
      timestamp: now(),
      nonce: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
      ...overrides,
    };
    return { ...params, sig: signLikeVonage(signatureSecret, method, params) };
  };
  const get = (params: Record<string, string>): CallbackRequest => ({
    method: 'GET',
    url: `${callbackUrl}?${new URLSearchParams(params).toString()}`,
    headers: {},
    rawBody: Buffer.alloc(0),
  });
  const postJson = (params: Record<string, string>): CallbackRequest => ({
    method: 'POST',
    url: callbackUrl,
    headers: { 'content-type': 'application/json' },
    rawBody: Buffer.from(JSON.stringify(params)),
  });
  const postForm = (params: Record<string, string>): CallbackRequest => ({
    method: 'POST',
    url: callbackUrl,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: Buffer.from(new URLSearchParams(params).toString()),
  });
  const verify = (request: CallbackRequest, p: Provider = provider) => {
    assert.ok(p.verifyCallback);
    return p.verifyCallback(request);
  };

  it('accepts a signed receipt sent as GET, POST form or POST JSON, and reads it', () => {
    for (const request of [get(receipt()), postForm(receipt()), postJson(receipt())]) {
      assert.deepEqual(verify(request), {
        kind: 'receipts',
        receipts: [{ messageId: '0A0000001234567B', status: 'DELIVERED', detail: 'delivered', at: new Date('2020-01-01T12:00:00Z') }],
      });
    }
  });

  it('maps each documented status, with the err-code when not 0', () => {
    const expected: Record<string, string> = {
      accepted: 'SENT', buffered: 'SENT', delivered: 'DELIVERED',
      expired: 'UNDELIVERED', failed: 'UNDELIVERED', rejected: 'UNDELIVERED', unknown: 'UNDELIVERED',
    };
    for (const [status, ours] of Object.entries(expected)) {
      const result = verify(postJson(receipt({ status, 'err-code': status === 'delivered' ? '0' : '5' })));
      assert.equal(result.kind === 'receipts' ? result.receipts[0]?.status : result.reason, ours, status);
    }
    const failed = verify(get(receipt({ status: 'failed', 'err-code': '6' })));
    assert.equal(failed.kind === 'receipts' ? failed.receipts[0]?.detail : null, 'failed (err-code 6)');
    const other = verify(get(receipt({ status: 'something-new' })));
    assert.deepEqual(other, { kind: 'receipts', receipts: [] });
  });

  it('checks every signature method Vonage offers, and & and = inside values', () => {
    for (const method of ['md5hash', 'md5', 'sha1', 'sha256', 'sha512'] as const) {
      const p = createVonage({ VONAGE_SIGNATURE_METHOD: method });
      try {
        assert.equal(verify(get(receipt({ to: 'A&B=C' }, method)), p).kind, 'receipts', method);
        assert.equal(verify(get(receipt({}, method === 'md5hash' ? 'sha1' : 'md5hash')), p).kind, 'forbidden', method);
      } finally {
        void p.stop();
      }
    }
  });

  it('accepts either form of a receipt with an empty value (signed, as the Node SDK does, or left out, as the Java SDK does)', () => {
    const withEmpty = receipt({ 'client-ref': '' });
    assert.equal(verify(get(withEmpty)).kind, 'receipts');
    const { sig: _sig, ...unsigned } = withEmpty;
    const { 'client-ref': _ref, ...withoutEmpty } = unsigned;
    const javaSig = signLikeVonage(signatureSecret, 'md5hash', withoutEmpty);
    assert.equal(verify(get({ ...unsigned, sig: javaSig })).kind, 'receipts');
  });

  it('refuses a receipt without sig, with a wrong, other-secret or tampered sig, or without or with an old timestamp', () => {
    const good = receipt();
    const { sig: _sig, ...unsigned } = good;
    assert.equal(verify(get(unsigned)).kind, 'forbidden');
    assert.equal(verify(get({ ...good, sig: '' })).kind, 'forbidden');
    assert.equal(verify(get({ ...good, sig: '0123456789abcdef0123456789abcdef' })).kind, 'forbidden');
    assert.equal(verify(get({ ...unsigned, sig: signLikeVonage('another-secret', 'md5hash', unsigned) })).kind, 'forbidden');
    assert.equal(verify(get({ ...good, status: 'failed' })).kind, 'forbidden');
    assert.equal(verify(postJson({ ...good, messageId: '0A00000099999999' })).kind, 'forbidden');
    const { timestamp: _t, ...noTimestamp } = unsigned;
    assert.equal(verify(get({ ...noTimestamp, sig: signLikeVonage(signatureSecret, 'md5hash', noTimestamp) })).kind, 'forbidden');
    const old = receipt({ timestamp: String(Math.floor(Date.now() / 1000) - 6 * 60) });
    assert.match(String(verify(get(old)).kind === 'forbidden' && (verify(get(old)) as { reason: string }).reason), /5 minutes/);
    const future = receipt({ timestamp: String(Math.floor(Date.now() / 1000) + 6 * 60) });
    assert.equal(verify(get(future)).kind, 'forbidden');
    assert.equal(verify(get(receipt({ timestamp: String(Math.floor(Date.now() / 1000) - 4 * 60) }))).kind, 'receipts');
  });

  it('refuses what is none of Vonage\'s forms: another method, another content type, nested JSON', () => {
    assert.equal(verify({ ...postJson(receipt()), method: 'PUT' }).kind, 'forbidden');
    assert.equal(verify({ ...postJson(receipt()), headers: { 'content-type': 'text/plain' } }).kind, 'forbidden');
    assert.equal(verify({ ...postJson(receipt()), rawBody: Buffer.from('{"status":{"x":1}}') }).kind, 'forbidden');
  });

  it('an HMAC sig may come in either case', () => {
    const params = receipt({}, 'sha256');
    assert.equal(verify(get({ ...params, sig: (params.sig ?? '').toLowerCase() }), sha256).kind, 'receipts');
    assert.equal(verify(get({ ...params, sig: (params.sig ?? '').toUpperCase() }), sha256).kind, 'receipts');
  });
});
