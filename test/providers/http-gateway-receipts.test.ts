import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { CallbackRequest, CallbackResult } from '../../src/channels/provider-port.js';
import { callbackUrl, createGateway, secret } from './http-gateway-fixtures.js';

describe('http gateway receipts (Standard Webhooks signed callbacks)', () => {
  const provider = createGateway('http://127.0.0.1:9/');
  after(() => provider.stop());
  const gateway = new Webhook(secret);

  /** A callback signed by the standardwebhooks package, as a gateway would send it. */
  const signed = (body: unknown, options: { at?: Date; id?: string; key?: Webhook; raw?: string } = {}): CallbackRequest => {
    const raw = options.raw ?? JSON.stringify(body);
    const at = options.at ?? new Date();
    const id = options.id ?? 'msg_2b7x';
    return {
      method: 'POST',
      url: callbackUrl,
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': (options.key ?? gateway).sign(id, at, raw),
      },
      rawBody: Buffer.from(raw),
    };
  };
  const verify = (request: CallbackRequest): CallbackResult => {
    assert.ok(provider.verifyCallback);
    return provider.verifyCallback(request);
  };
  const reasonOf = (result: CallbackResult): string => (result.kind === 'forbidden' ? result.reason : 'not forbidden');

  it('accepts one signed receipt and reads it', () => {
    const result = verify(signed({ messageId: 'gw-17', status: 'DELIVERED', detail: 'DELIVRD', at: '2026-03-01T10:15:30.250+01:00' }));
    assert.deepEqual(result, {
      kind: 'receipts',
      receipts: [{ messageId: 'gw-17', status: 'DELIVERED', detail: 'DELIVRD', at: new Date('2026-03-01T09:15:30.250Z') }],
    });
  });

  it('accepts an array of receipts, detail and at optional', () => {
    const result = verify(
      signed([
        { messageId: 'gw-1', status: 'SENT' },
        { messageId: 'send-2', status: 'UNDELIVERED', detail: 'absent subscriber\u0007', at: null, extra: 'ignored' },
      ]),
    );
    assert.deepEqual(result, {
      kind: 'receipts',
      receipts: [
        { messageId: 'gw-1', status: 'SENT', detail: null, at: null },
        { messageId: 'send-2', status: 'UNDELIVERED', detail: 'absent subscriber', at: null },
      ],
    });
    assert.deepEqual(verify(signed([])), { kind: 'receipts', receipts: [] });
  });

  it('accepts when any one of several signatures matches', () => {
    const request = signed({ messageId: 'gw-1', status: 'SENT' });
    const other = new Webhook(`whsec_${randomBytes(32).toString('base64')}`);
    const wrong = other.sign('msg_2b7x', new Date(), request.rawBody.toString());
    const headers = { ...request.headers, 'webhook-signature': `${wrong} v1a,ignored ${request.headers['webhook-signature'] ?? ''}` };
    assert.equal(verify({ ...request, headers }).kind, 'receipts');
  });

  it('forbids a missing, wrong, tampered or stale signature', () => {
    const body = { messageId: 'gw-1', status: 'DELIVERED' };
    const good = signed(body);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      assert.match(reasonOf(verify({ ...good, headers: { ...good.headers, [name]: undefined } })), /missing/, name);
    }
    const otherKey = new Webhook(`whsec_${randomBytes(32).toString('base64')}`);
    assert.match(reasonOf(verify(signed(body, { key: otherKey }))), /does not match/);
    assert.match(reasonOf(verify({ ...good, headers: { ...good.headers, 'webhook-signature': 'v1,AAAA' } })), /does not match/);
    assert.match(reasonOf(verify({ ...good, rawBody: Buffer.from(JSON.stringify({ ...body, status: 'UNDELIVERED' })) })), /does not match/);
    assert.match(reasonOf(verify({ ...good, headers: { ...good.headers, 'webhook-id': 'msg_other' } })), /does not match/);
    assert.match(reasonOf(verify(signed(body, { at: new Date(Date.now() - 6 * 60_000) }))), /too old/);
    assert.match(reasonOf(verify(signed(body, { at: new Date(Date.now() + 6 * 60_000) }))), /future/);
    assert.equal(verify(signed(body, { at: new Date(Date.now() - 4 * 60_000) })).kind, 'receipts');
    assert.match(reasonOf(verify({ ...good, headers: { ...good.headers, 'webhook-timestamp': 'yesterday' } })), /unix seconds/);
    assert.equal(verify({ ...good, method: 'GET' }).kind, 'forbidden');
  });

  it('forbids a signed body of the wrong shape, saying what is wrong', () => {
    const cases: [string, RegExp][] = [
      ['not json', /not JSON/],
      ['"DELIVERED"', /not an object/],
      [JSON.stringify({ status: 'DELIVERED' }), /messageId/],
      [JSON.stringify({ messageId: 'gw\u0000', status: 'DELIVERED' }), /messageId/],
      [JSON.stringify({ messageId: 'gw-1', status: 'delivered' }), /status/],
      [JSON.stringify({ messageId: 'gw-1', status: 'DELIVERED', detail: 5 }), /detail/],
      [JSON.stringify({ messageId: 'gw-1', status: 'DELIVERED', at: '2026-03-01 10:15' }), /at must be/],
      [JSON.stringify({ messageId: 'gw-1', status: 'DELIVERED', at: '2026-03-01T10:15:30' }), /at must be/],
      [JSON.stringify([{ messageId: 'gw-1', status: 'SENT' }, { messageId: 'gw-2' }]), /\[1\]: status/],
      [JSON.stringify(Array.from({ length: 1001 }, (_, i) => ({ messageId: `m${i}`, status: 'SENT' }))), /more than 1000/],
    ];
    for (const [raw, reason] of cases) {
      const result = verify(signed(null, { raw }));
      assert.equal(result.kind, 'forbidden', raw.slice(0, 80));
      assert.match(reasonOf(result), /^malformed receipt: /);
      assert.match(reasonOf(result), reason);
    }
  });
});
