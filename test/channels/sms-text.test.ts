import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { smsText } from '../../src/channels/sms.js';
import { defaultClientSettings } from '../../src/domain/client-settings.js';
import type { Verification } from '../../src/domain/verification.js';
import { createVerification } from '../support/api.js';
import { createHarness } from '../support/harness.js';

function withLifetime(seconds: number): Verification {
  const createdAt = new Date('2026-11-21T09:30:00.000Z');
  return {
    id: '00000000-0000-4000-8000-000000000001',
    clientId: '00000000-0000-4000-8000-000000000002',
    createdAt,
    updatedAt: createdAt,
    expiresAt: new Date(createdAt.getTime() + seconds * 1000),
    otp: '482910',
    phoneNumber: '+2348012345678',
    countryCode: '+234',
    counter: 0,
    pairedNumber: '09010000000',
    pairedE164: '+2349010000000',
    sendRequests: 1,
    lastSendAt: createdAt,
    locale: null,
    codeWithheld: false,
    testNumber: false,
    regionCode: 'NG',
    type: 'SMS',
    status: 'PENDING',
    webhookUrl: null,
    reference: null,
    failureReason: null,
    delivery: { channel: 'SMS', provider: null, messageId: null, status: 'QUEUED', sends: 0, updatedAt: createdAt },
    deliveries: [],
    workflow: [],
    fallbackAfterSeconds: 60,
    nextStepAt: null,
    failoverAt: null,
    steps: 0,
  };
}

describe('the SMS text', () => {
  it('gives the real lifetime: seconds under a minute, whole minutes (rounded down) from one minute', () => {
    const cases: [number, string][] = [
      [10, '10 seconds'],
      [59, '59 seconds'],
      [60, '1 minute'],
      [90, '1 minute'],
      [300, '5 minutes'],
      [600, '10 minutes'],
      [86_400, '1440 minutes'],
    ];
    for (const [seconds, said] of cases) {
      assert.equal(
        smsText(withLifetime(seconds), defaultClientSettings),
        `482910 is your verification code. It expires in ${said}. Do not share it.`,
        `${seconds} s`,
      );
    }
  });

  for (const [ttl, said] of [
    ['30', '30 seconds'],
    ['300', '5 minutes'],
  ] as const) {
    it(`says "${said}" in the SMS sent with OTP_TTL_SECONDS=${ttl}`, async () => {
      const h = await createHarness('pglite', { env: { OTP_TTL_SECONDS: ttl } });
      try {
        const created = await createVerification(h, await h.token());
        await h.services.sendWorker.idle();
        const [sent] = await h.services.messages.forVerification(created.id);
        assert.ok(sent);
        assert.equal(sent.body, `${created.otp} is your verification code. It expires in ${said}. Do not share it.`);
      } finally {
        await h.close();
      }
    });
  }
});
