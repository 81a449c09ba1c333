import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventFor, webhookPayload } from '../../src/domain/events.js';
import type { Verification } from '../../src/domain/verification.js';

describe('events (contract 3.4 and 4)', () => {
  it('names the event each final state emits, and none for PENDING', () => {
    assert.equal(eventFor('SUCCESS'), 'action.otp.success');
    assert.equal(eventFor('FAILED'), 'action.otp.failed');
    assert.equal(eventFor('EXPIRED'), 'action.otp.expired');
    assert.equal(eventFor('PENDING'), null);
  });

  it('builds the webhook payload of seed 2.4 plus reference and failureReason, and nothing else', () => {
    const v: Verification = {
      id: '6f1c3a52-8a43-4b8e-9d9c-0d5a3e1c2b7a',
      clientId: '0b8e6a4e-6f0a-4c55-9a8e-2a9d1f3c4b5d',
      createdAt: new Date('2026-11-21T09:30:00.123Z'),
      updatedAt: new Date('2026-11-21T09:31:00.000Z'),
      expiresAt: new Date('2026-11-21T09:40:00.123Z'),
      otp: '123456',
      phoneNumber: '+2348031234567',
      countryCode: '+234',
      counter: 1,
      pairedNumber: '09010000000',
      pairedE164: '+2349010000000',
      sendRequests: 1,
      locale: null,
      codeWithheld: false,
      testNumber: false,
      regionCode: 'NG',
      lastSendAt: new Date('2026-11-21T09:30:00.123Z'),
      type: 'SMS',
      status: 'SUCCESS',
      webhookUrl: 'https://hooks.example.com/x',
      reference: 'r-1',
      failureReason: null,
      delivery: { channel: 'SMS', provider: 'log', messageId: 'm', status: 'SENT', sends: 1, updatedAt: new Date('2026-11-21T09:30:01.000Z') },
      deliveries: [],
      workflow: [],
      fallbackAfterSeconds: 60,
      nextStepAt: null,
      failoverAt: null,
      steps: 0,
    };
    assert.deepEqual(webhookPayload('action.otp.success', v), {
      event: 'action.otp.success',
      data: {
        id: v.id,
        otp: '123456',
        type: 'SMS',
        status: 'SUCCESS',
        createdAt: '2026-11-21T09:30:00.123Z',
        countryCode: '+234',
        phoneNumber: '+2348031234567',
        reference: 'r-1',
        failureReason: null,
      },
    });
  });
});
