import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  asOf,
  codesMatch,
  decideVerify,
  effectiveStatus,
  numericCode,
  type Verification,
} from '../../src/domain/verification.js';

const t0 = new Date('2026-11-21T09:30:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

function pending(overrides: Partial<Verification> = {}): Verification {
  return {
    id: '6f1c3a52-8a43-4b8e-9d9c-0d5a3e1c2b7a',
    clientId: '0b8e6a4e-6f0a-4c55-9a8e-2a9d1f3c4b5d',
    createdAt: t0,
    updatedAt: t0,
    expiresAt: at(600_000),
    otp: '123456',
    phoneNumber: '+2348031234567',
    countryCode: '+234',
    counter: 0,
    pairedNumber: '09010000000',
    pairedE164: '+2349010000000',
    sendRequests: 1,
    locale: null,
    codeWithheld: false,
    testNumber: false,
    regionCode: 'NG',
    lastSendAt: t0,
    type: 'SMS',
    status: 'PENDING',
    webhookUrl: null,
    reference: null,
    failureReason: null,
    delivery: { channel: 'SMS', provider: null, messageId: null, status: 'QUEUED', sends: 0, updatedAt: t0 },
    deliveries: [],
    workflow: [],
    fallbackAfterSeconds: 60,
    nextStepAt: null,
    failoverAt: null,
    steps: 0,
    ...overrides,
  };
}

describe('the verification state machine (contract 3.4)', () => {
  it('moves PENDING to SUCCESS on the right code in time, counting the attempt', () => {
    const d = decideVerify(pending(), '123456', at(1000), 5);
    assert.equal(d.kind, 'success');
    assert.ok(d.kind === 'success');
    assert.equal(d.next.status, 'SUCCESS');
    assert.equal(d.next.counter, 1);
    assert.deepEqual(d.next.updatedAt, at(1000));
  });

  it('keeps PENDING on a wrong code with attempts left, counting it', () => {
    const d = decideVerify(pending({ counter: 2 }), '654321', at(1000), 5);
    assert.ok(d.kind === 'mismatch');
    assert.equal(d.next.status, 'PENDING');
    assert.equal(d.next.counter, 3);
  });

  it('moves to FAILED on a wrong code at the last allowed attempt', () => {
    const d = decideVerify(pending({ counter: 4 }), '654321', at(1000), 5);
    assert.ok(d.kind === 'mismatch');
    assert.equal(d.next.status, 'FAILED');
    assert.equal(d.next.counter, 5);
  });

  it('accepts the right code on the last allowed attempt', () => {
    const d = decideVerify(pending({ counter: 4 }), '123456', at(1000), 5);
    assert.ok(d.kind === 'success');
    assert.equal(d.next.counter, 5);
  });

  it('fails at once with OTP_MAX_ATTEMPTS 1', () => {
    const d = decideVerify(pending(), '000000', at(1), 1);
    assert.ok(d.kind === 'mismatch');
    assert.equal(d.next.status, 'FAILED');
  });

  for (const status of ['SUCCESS', 'FAILED', 'EXPIRED'] as const) {
    it(`refuses any attempt on ${status}, counting nothing`, () => {
      const v = pending({ status, counter: 2 });
      const d = decideVerify(v, '123456', at(1000), 5);
      assert.ok(d.kind === 'not-pending');
      assert.equal(d.current, v);
    });
  }

  it('refuses an attempt at or after expiresAt as EXPIRED, even with the right code', () => {
    for (const ms of [600_000, 600_001, 10 ** 9]) {
      const d = decideVerify(pending(), '123456', at(ms), 5);
      assert.ok(d.kind === 'not-pending');
      assert.equal(d.current.status, 'EXPIRED');
      assert.equal(d.current.counter, 0);
    }
    assert.equal(decideVerify(pending(), '123456', at(599_999), 5).kind, 'success');
  });

  it('reads a PENDING verification past its time as EXPIRED, updated at its expiry', () => {
    const v = pending();
    assert.equal(effectiveStatus(v, at(599_999)), 'PENDING');
    assert.equal(effectiveStatus(v, at(600_000)), 'EXPIRED');
    assert.equal(asOf(v, at(1000)), v, 'unchanged while in time');
    const late = asOf(v, at(700_000));
    assert.equal(late.status, 'EXPIRED');
    assert.deepEqual(late.updatedAt, v.expiresAt);
  });

  it('never turns a final state into EXPIRED', () => {
    for (const status of ['SUCCESS', 'FAILED'] as const) {
      assert.equal(effectiveStatus(pending({ status }), at(10 ** 9)), status);
    }
  });
});

describe('codes', () => {
  it('compares codes exactly, whatever their lengths', () => {
    assert.equal(codesMatch('123456', '123456'), true);
    assert.equal(codesMatch('123456', '123457'), false);
    assert.equal(codesMatch('123456', '12345'), false);
    assert.equal(codesMatch('123456', '1234567'), false);
    assert.equal(codesMatch('123456', ''), false);
    assert.equal(codesMatch('123456', ' 123456'), false);
  });

  it('makes numeric codes of the asked length from the random source', () => {
    const digits = [3, 0, 9, 1, 7, 2];
    let i = 0;
    assert.equal(
      numericCode(() => digits[i++] ?? 0, 6),
      '309172',
    );
    const asked: number[] = [];
    numericCode((max) => {
      asked.push(max);
      return 0;
    }, 8);
    assert.deepEqual(asked, Array(8).fill(10), 'each digit uniformly from 0-9');
    assert.equal(numericCode(() => 0, 6), '000000', 'leading zeros are kept');
  });
});

describe('a dropped call verified by its whole caller id (contract 9)', () => {
  const call = (overrides: Partial<Verification> = {}) =>
    pending({ type: 'DROPPED_CALL', otp: '4821', pairedNumber: '09010004821', pairedE164: '+2349010004821', ...overrides });

  for (const shown of ['+2349010004821', '+234 901 000 4821', '002349010004821', '09010004821', '0901-000-4821', '(0901) 000.4821', '2349010004821']) {
    it(`matches "${shown}"`, () => {
      assert.equal(decideVerify(call(), shown, at(1000), 5).kind, 'success');
    });
  }

  it('still matches the 4 digits of the code', () => {
    assert.equal(decideVerify(call(), '4821', at(1000), 5).kind, 'success');
  });

  for (const wrong of ['+2349010004822', '09010004822', '+2349010004821 ext', '+44 9010004821', '', '9010004821x']) {
    it(`counts "${wrong}" as a wrong code`, () => {
      const d = decideVerify(call(), wrong, at(1000), 5);
      assert.equal(d.kind, 'mismatch');
      assert.ok(d.kind === 'mismatch');
      assert.equal(d.next.counter, 1);
    });
  }

  it('never matches an SMS verification by its sender number', () => {
    const sms = pending({ otp: '123456', pairedNumber: '09010000000', pairedE164: '+2349010000000' });
    assert.equal(decideVerify(sms, '+2349010000000', at(1000), 5).kind, 'mismatch');
    assert.equal(decideVerify(sms, '09010000000', at(1000), 5).kind, 'mismatch');
  });

  it('matches a record made before the E.164 was kept by its local format only', () => {
    assert.equal(decideVerify(call({ pairedE164: null }), '09010004821', at(1000), 5).kind, 'success');
    assert.equal(decideVerify(call({ pairedE164: null }), '+2349010004821', at(1000), 5).kind, 'mismatch');
  });
});
