import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import type { CallbackRequest } from '../../src/channels/provider-port.js';
import { callbackUrl, createInfobip, pendingAnswer, secret, sms } from './infobip-fixtures.js';
import { localServer, replyJson as json, sendOnce } from './support.js';

describe('infobip delivery reports (secret in the callback path)', () => {
  const provider = createInfobip({});
  after(() => provider.stop());
  const receiver = localServer();
  const verify = (request: CallbackRequest) => {
    assert.ok(provider.verifyCallback);
    return provider.verifyCallback(request);
  };
  const callback = (body: unknown, url = `${callbackUrl}/${secret}`, contentType = 'application/json'): CallbackRequest => ({
    method: 'POST',
    url,
    headers: { 'content-type': contentType },
    rawBody: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
  });
  /** A report as Infobip documents it (DeliveryReports, receive-outbound-sms-message-report-v3). */
  const report = (groupName: string, name: string, error: { name: string; groupId: number } = { name: 'NO_ERROR', groupId: 0 }) => ({
    results: [
      {
        bulkId: 'BULK-ID-123-xyz',
        price: { pricePerMessage: 0.01, currency: 'EUR' },
        status: { groupId: 3, groupName, id: 5, name, description: 'x' },
        error: { ...error, id: 0, description: 'x', permanent: false },
        messageId: sms.sendId,
        to: '2348012345678',
        sender: 'OTPService',
        sentAt: '2019-11-09T16:00:00.000+0100',
        doneAt: '2019-11-09T16:00:00.000+0100',
        messageCount: 1,
      },
    ],
  });

  it('reads a documented report on the secret URL', () => {
    assert.deepEqual(verify(callback(report('DELIVERED', 'DELIVERED_TO_HANDSET'))), {
      kind: 'receipts',
      receipts: [{ messageId: sms.sendId, status: 'DELIVERED', detail: 'DELIVERED_TO_HANDSET', at: new Date('2019-11-09T15:00:00.000Z') }],
    });
  });

  it('maps every status group, names the error, and skips a group it does not know', () => {
    const cases: [string, string, string, string][] = [
      ['PENDING', 'PENDING_ENROUTE', 'SENT', 'PENDING_ENROUTE'],
      ['ACCEPTED', 'ACCEPTED', 'SENT', 'ACCEPTED'],
      ['UNDELIVERABLE', 'UNDELIVERABLE_NOT_DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE_NOT_DELIVERED (EC_ABSENT_SUBSCRIBER)'],
      ['EXPIRED', 'EXPIRED_EXPIRED', 'UNDELIVERED', 'EXPIRED_EXPIRED (EC_ABSENT_SUBSCRIBER)'],
      ['REJECTED', 'REJECTED_NETWORK', 'UNDELIVERED', 'REJECTED_NETWORK (EC_ABSENT_SUBSCRIBER)'],
    ];
    for (const [group, name, ours, detail] of cases) {
      const error = ours === 'UNDELIVERED' ? { name: 'EC_ABSENT_SUBSCRIBER', groupId: 1 } : undefined;
      const result = verify(callback(report(group, name, error)));
      assert.equal(result.kind === 'receipts' ? result.receipts[0]?.status : result.reason, ours, group);
      assert.equal(result.kind === 'receipts' ? result.receipts[0]?.detail : null, detail);
    }
    assert.deepEqual(verify(callback(report('SOMETHING_NEW', 'X'))), { kind: 'receipts', receipts: [] });
  });

  it('reads every result of a batch, without a doneAt as at null', () => {
    const batch = { results: [report('DELIVERED', 'DELIVERED_TO_HANDSET').results[0], { messageId: 'other', status: { groupName: 'REJECTED' } }] };
    assert.deepEqual(verify(callback(batch)), {
      kind: 'receipts',
      receipts: [
        { messageId: sms.sendId, status: 'DELIVERED', detail: 'DELIVERED_TO_HANDSET', at: new Date('2019-11-09T15:00:00.000Z') },
        { messageId: 'other', status: 'UNDELIVERED', detail: 'REJECTED', at: null },
      ],
    });
  });

  it('the URL it asks Infobip to call is the one it believes', async () => {
    let deliveryUrl = '';
    receiver.handler = (_req, res, seen) => {
      const body = seen.json as { messages: { webhooks: { delivery: { url: string } } }[] };
      json(res, 200, { ...pendingAnswer(sms.sendId), url: body.messages[0]?.webhooks.delivery.url });
      deliveryUrl = body.messages[0]?.webhooks.delivery.url ?? '';
    };
    const sender = createInfobip({ INFOBIP_BASE_URL: receiver.url });
    assert.equal((await sendOnce(sender, sms, AbortSignal.timeout(5_000))).kind, 'accepted');
    assert.equal(verify(callback(report('DELIVERED', 'DELIVERED_TO_HANDSET'), deliveryUrl)).kind, 'receipts');
  });

  it('forbids a missing, wrong, partial or misplaced secret', () => {
    const body = report('DELIVERED', 'DELIVERED_TO_HANDSET');
    const urls = [
      callbackUrl,
      `${callbackUrl}/`,
      `${callbackUrl}/${secret.slice(0, -1)}`,
      `${callbackUrl}/${secret}x`,
      `${callbackUrl}/${secret.toUpperCase()}`,
      `${callbackUrl}/${secret}/`,
      `${callbackUrl}/${secret}/more`,
      `${callbackUrl}?secret=${secret}`,
      `${callbackUrl}/${'x'.repeat(secret.length)}`,
      'not a url',
    ];
    for (const url of urls) {
      const result = verify(callback(body, url));
      assert.equal(result.kind, 'forbidden', url);
      assert.ok(result.kind === 'forbidden' && !result.reason.includes(secret));
    }
    assert.equal(verify(callback(body, `${callbackUrl}/${secret}?x=1`)).kind, 'receipts');
  });

  it('forbids a malformed body, another content type, or another method', () => {
    const malformed: unknown[] = ['not json', '[]', {}, { results: {} }, { results: [{ status: { groupName: 'DELIVERED' } }] }, { results: [{ messageId: 'm', status: {} }] }, { results: [null] }];
    for (const body of malformed) assert.equal(verify(callback(body)).kind, 'forbidden', JSON.stringify(body));
    assert.equal(verify(callback(report('DELIVERED', 'D'), undefined, 'application/xml')).kind, 'forbidden');
    assert.equal(verify({ ...callback(report('DELIVERED', 'D')), method: 'GET' }).kind, 'forbidden');
  });
});
