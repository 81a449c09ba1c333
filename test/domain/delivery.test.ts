import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideReceipt, decideSendFailure, nextInRoute, providerAfter } from '../../src/domain/delivery.js';
import type { SendJob } from '../../src/domain/send-job.js';
import type { Verification } from '../../src/domain/verification.js';

const at = (ms: number) => new Date(Date.UTC(2026, 10, 23) + ms);
const order = ['twilio', 'smpp', 'log'] as const;
const delays = [2, 10];

function job(overrides: Partial<SendJob> = {}): SendJob {
  return {
    verificationId: 'v1',
    channel: 'sms',
    sender: '+2349010000000',
    status: 'pending',
    attempts: 1,
    provider: null,
    providerFailures: 0,
    dueAt: at(0),
    claimedUntil: null,
    lastError: null,
    createdAt: at(0),
    ...overrides,
  };
}

function sent(overrides: Partial<Verification> = {}): Verification {
  return {
    id: 'v1',
    clientId: 'c1',
    createdAt: at(0),
    updatedAt: at(0),
    expiresAt: at(600_000),
    otp: '123456',
    phoneNumber: '+2348012345678',
    countryCode: '+234',
    counter: 0,
    pairedNumber: '09010000000',
    pairedE164: '+2349010000000',
    sendRequests: 1,
    locale: null,
    codeWithheld: false,
    testNumber: false,
    regionCode: 'NG',
    lastSendAt: at(0),
    type: 'SMS',
    status: 'PENDING',
    webhookUrl: null,
    reference: null,
    failureReason: null,
    delivery: { channel: 'SMS', provider: 'twilio', messageId: 'SM1', status: 'SENT', sends: 1, updatedAt: at(10) },
    deliveries: [],
    workflow: [],
    fallbackAfterSeconds: 60,
    nextStepAt: null,
    failoverAt: null,
    steps: 0,
    ...overrides,
  };
}

describe('failover order (contract 8)', () => {
  it('names the next provider, none after the last, and the first for one no longer configured', () => {
    assert.equal(providerAfter(order, 'twilio'), 'smpp');
    assert.equal(providerAfter(order, 'log'), null);
    assert.equal(providerAfter(order, 'vonage'), 'twilio');
  });

  it("moves a code the clock fails over on through the route's next provider, never round again (contract 17)", () => {
    assert.equal(nextInRoute(order, 'twilio'), 'smpp');
    assert.equal(nextInRoute(order, 'log'), null);
    assert.equal(nextInRoute(order, 'vonage'), null, 'a provider the route no longer names hands over to none');
  });
});

describe('a refused or failed send', () => {
  it('moves a permanent refusal to the next provider at once, and gives up after the last', () => {
    assert.deepEqual(decideSendFailure(job(), 'twilio', { kind: 'permanent', reason: 'bad number' }, order, delays, at(0)), {
      kind: 'failover',
      provider: 'smpp',
    });
    assert.deepEqual(decideSendFailure(job(), 'log', { kind: 'permanent', reason: 'x' }, order, delays, at(0)), { kind: 'give-up' });
  });

  it('retries a first transient failure on the same provider after the next delay, or Retry-After if longer', () => {
    assert.deepEqual(decideSendFailure(job(), 'twilio', { kind: 'transient', reason: '503' }, order, delays, at(0)), { kind: 'retry', at: at(2000) });
    assert.deepEqual(
      decideSendFailure(job(), 'twilio', { kind: 'transient', reason: '429', retryAfterSeconds: 7 }, order, delays, at(0)),
      { kind: 'retry', at: at(7000) },
    );
  });

  it('moves on after the second transient failure in a row of one provider, when another is configured', () => {
    const second = job({ attempts: 2, provider: 'twilio', providerFailures: 1 });
    assert.deepEqual(decideSendFailure(second, 'twilio', { kind: 'transient', reason: '503' }, order, delays, at(0)), {
      kind: 'failover',
      provider: 'smpp',
    });
  });

  it('with one provider, retries on every delay and then gives up', () => {
    const only = ['twilio'];
    const third = job({ attempts: 2, provider: 'twilio', providerFailures: 1 });
    assert.deepEqual(decideSendFailure(third, 'twilio', { kind: 'transient', reason: '503' }, only, delays, at(0)), { kind: 'retry', at: at(10_000) });
    const last = job({ attempts: 3, provider: 'twilio', providerFailures: 2 });
    assert.deepEqual(decideSendFailure(last, 'twilio', { kind: 'transient', reason: '503' }, only, delays, at(0)), { kind: 'give-up' });
  });
});

describe('a receipt', () => {
  const receipt = (status: 'SENT' | 'DELIVERED' | 'UNDELIVERED', messageId = 'SM1') => ({ messageId, status, detail: null, at: null });

  it('records DELIVERED on the latest send', () => {
    const d = decideReceipt(sent(), 'twilio', receipt('DELIVERED'), order, at(20));
    assert.equal(d.kind, 'update');
    assert.ok(d.kind === 'update');
    assert.equal(d.delivery.status, 'DELIVERED');
    assert.deepEqual(d.delivery.updatedAt, at(20));
  });

  it('ignores receipts of an older send, repeats, and a late SENT after the outcome', () => {
    assert.equal(decideReceipt(sent(), 'twilio', receipt('DELIVERED', 'SM0'), order, at(20)).kind, 'ignore');
    assert.equal(decideReceipt(sent(), 'smpp', receipt('DELIVERED'), order, at(20)).kind, 'ignore');
    const delivered = sent({ delivery: { ...sent().delivery, status: 'DELIVERED' } });
    assert.equal(decideReceipt(delivered, 'twilio', receipt('DELIVERED'), order, at(20)).kind, 'ignore');
    assert.equal(decideReceipt(delivered, 'twilio', receipt('SENT'), order, at(20)).kind, 'ignore');
    assert.equal(decideReceipt(delivered, 'twilio', receipt('UNDELIVERED'), order, at(20)).kind, 'ignore');
  });

  it("records a receipt of an earlier send the clock failed over from on that send, and nothing else's (contract 17)", () => {
    const attempt = (provider: string, status: 'SENT' | 'DELIVERED' | 'UNDELIVERED', channel: 'SMS' | 'WHATSAPP' = 'SMS') => ({ channel, provider, status, at: at(0), attempts: 1, lastError: null });
    const failedOver = sent({
      delivery: { ...sent().delivery, provider: 'smpp', messageId: 'M1' },
      deliveries: [attempt('twilio', 'SENT'), attempt('smpp', 'SENT')],
    });
    assert.equal(decideReceipt(failedOver, 'twilio', receipt('DELIVERED'), order, at(30)).kind, 'earlier');
    assert.equal(decideReceipt(failedOver, 'twilio', receipt('UNDELIVERED'), order, at(30)).kind, 'earlier');
    assert.equal(decideReceipt(failedOver, 'twilio', receipt('SENT'), order, at(30)).kind, 'ignore', 'a late "on its way" says nothing new');
    const settled = sent({ ...failedOver, deliveries: [attempt('twilio', 'UNDELIVERED'), attempt('smpp', 'SENT')] });
    assert.equal(decideReceipt(settled, 'twilio', receipt('DELIVERED'), order, at(30)).kind, 'ignore', 'an outcome already recorded stays');
    const otherStep = sent({ ...failedOver, deliveries: [attempt('twilio', 'SENT', 'WHATSAPP'), attempt('smpp', 'SENT')] });
    assert.equal(decideReceipt(otherStep, 'twilio', receipt('DELIVERED'), order, at(30)).kind, 'ignore', "another step's send");
  });

  it('fails an undelivered send over to the next provider while PENDING, and gives up after the last', () => {
    const d = decideReceipt(sent(), 'twilio', receipt('UNDELIVERED'), order, at(20));
    assert.equal(d.kind, 'failover');
    assert.ok(d.kind === 'failover');
    assert.equal(d.provider, 'smpp');
    assert.equal(d.delivery.status, 'UNDELIVERED');
    const onLast = sent({ delivery: { ...sent().delivery, provider: 'log' } });
    assert.equal(decideReceipt(onLast, 'log', receipt('UNDELIVERED'), order, at(20)).kind, 'give-up');
  });

  it('only records an undelivered send once the verification has ended', () => {
    assert.equal(decideReceipt(sent({ status: 'SUCCESS' }), 'twilio', receipt('UNDELIVERED'), order, at(20)).kind, 'update');
    assert.equal(decideReceipt(sent(), 'twilio', receipt('UNDELIVERED'), order, at(600_000)).kind, 'update');
  });
});
