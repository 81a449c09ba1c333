import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serviceSendOf, verifyServiceProviders } from '../../src/domain/service-code.js';
import { decideServiceVerify } from '../../src/domain/verify-service-check.js';
import { shownCode, type DeliveryAttempt, type Verification } from '../../src/domain/verification.js';
import { providerModules } from '../../src/providers/registry.js';
import { logProvider } from '../../src/providers/log.js';

const t0 = new Date('2026-11-21T09:30:00.000Z');

function pending(overrides: Partial<Verification> = {}): Verification {
  return {
    id: '6f1c3a52-8a43-4b8e-9d9c-0d5a3e1c2b7a',
    clientId: '0b8e6a4e-6f0a-4c55-9a8e-2a9d1f3c4b5d',
    createdAt: t0,
    updatedAt: t0,
    expiresAt: new Date(t0.getTime() + 600_000),
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

const attempt = (provider: string, status: DeliveryAttempt['status'], channel: DeliveryAttempt['channel'] = 'SMS'): DeliveryAttempt => ({ channel, provider, status, at: t0, attempts: 1, lastError: null });

describe('verify services as providers (contract 19)', () => {
  it('the domain names the providers that check their own codes, and each of them does', () => {
    const stub = { onReceipt: async () => {}, callbackUrl: null, callRingSeconds: 15, messageLog: { record: async () => {} }, logger: { info() {}, warn() {}, error() {} } };
    const raw: Record<string, string> = {
      TWILIO_ACCOUNT_SID: 'AC0123456789abcdef0123456789abcdef',
      TWILIO_AUTH_TOKEN: 'token-0123456789',
      TWILIO_VERIFY_SERVICE_SID: 'VA0123456789abcdef0123456789abcdef',
      VONAGE_API_KEY: 'abcd1234',
      VONAGE_API_SECRET: 'secret-0123',
      VONAGE_VERIFY_BRAND: 'ACME',
    };
    for (const name of verifyServiceProviders) {
      const module = providerModules.find((m) => m.name === name);
      assert.ok(module, `${name} is in the registry`);
      const values = Object.fromEntries(Object.entries(module.settings).map(([key, setting]) => [key, setting.parse(raw[key] ?? setting.default ?? '')]));
      assert.equal(typeof module.create(values, stub).checkCode, 'function', `${name} checks codes`);
    }
    // The others carry our code: none of them checks one (log as the example that can be made without settings).
    assert.equal(logProvider.create({}, stub).checkCode, undefined);
  });

  it("the code the user holds is the service's while its send is the latest taken, ours once our provider took one", () => {
    const sent = pending({ delivery: { channel: 'SMS', provider: 'twilio-verify', messageId: 'VE1', status: 'SENT', sends: 1, updatedAt: t0 }, deliveries: [attempt('twilio-verify', 'SENT')] });
    assert.deepEqual(serviceSendOf(sent), { provider: 'twilio-verify', to: '+2348031234567', messageId: 'VE1' });
    assert.equal(shownCode(sent), null);
    // A resend on its way: the send before it is still the code out there, its id no longer on the record.
    const resending = { ...sent, delivery: { ...sent.delivery, provider: null, messageId: null, status: 'QUEUED' as const } };
    assert.deepEqual(serviceSendOf(resending), { provider: 'twilio-verify', to: '+2348031234567', messageId: null });
    // Refused by the service, then taken by ours: our code.
    const failedOver = pending({
      delivery: { channel: 'SMS', provider: 'log', messageId: 'm1', status: 'SENT', sends: 1, updatedAt: t0 },
      deliveries: [attempt('twilio-verify', 'FAILED'), attempt('log', 'SENT')],
    });
    assert.equal(serviceSendOf(failedOver), null);
    assert.equal(shownCode(failedOver), '123456');
    // A workflow step away from it: WhatsApp through ours.
    const stepped = pending({
      delivery: { channel: 'WHATSAPP', provider: 'meta', messageId: 'wamid', status: 'DELIVERED', sends: 2, updatedAt: t0 },
      deliveries: [attempt('vonage-verify', 'SENT'), attempt('meta', 'DELIVERED', 'WHATSAPP')],
    });
    assert.equal(serviceSendOf(stepped), null);
    assert.equal(serviceSendOf(pending()), null, 'nothing sent yet');
  });

  it("a service's answer decides as a code does: an attempt either way, FAILED MAX_ATTEMPTS on the last wrong one", () => {
    const now = new Date(t0.getTime() + 1000);
    const right = decideServiceVerify(pending(), true, now, 3);
    assert.equal(right.kind === 'success' && right.next.counter, 1);
    const wrong = decideServiceVerify(pending({ counter: 1 }), false, now, 3);
    assert.deepEqual(wrong.kind === 'mismatch' && [wrong.next.counter, wrong.next.status], [2, 'PENDING']);
    const last = decideServiceVerify(pending({ counter: 2 }), false, now, 3);
    assert.deepEqual(last.kind === 'mismatch' && [last.next.status, last.next.failureReason], ['FAILED', 'MAX_ATTEMPTS']);
    const late = decideServiceVerify(pending(), true, new Date(t0.getTime() + 601_000), 3);
    assert.equal(late.kind, 'not-pending');
  });

  it("a verify service refuses a code or text it was given (a relay's, a caller's own): the next provider sends it", async () => {
    const stub = { onReceipt: async () => {}, callbackUrl: null, callRingSeconds: 15, messageLog: { record: async () => {} }, logger: { info() {}, warn() {}, error() {} } };
    const raw: Record<string, string> = {
      TWILIO_ACCOUNT_SID: 'AC0123456789abcdef0123456789abcdef',
      TWILIO_AUTH_TOKEN: 'token-0123456789',
      TWILIO_VERIFY_SERVICE_SID: 'VA0123456789abcdef0123456789abcdef',
      // Nothing listens there: a request made would be a transient failure, not the permanent refusal.
      TWILIO_VERIFY_BASE_URL: 'http://127.0.0.1:9',
      VONAGE_API_KEY: 'abcd1234',
      VONAGE_API_SECRET: 'secret-0123',
      VONAGE_VERIFY_BRAND: 'ACME',
      VONAGE_VERIFY_BASE_URL: 'http://127.0.0.1:9',
    };
    for (const name of verifyServiceProviders) {
      const module = providerModules.find((m) => m.name === name);
      assert.ok(module);
      const values = Object.fromEntries(Object.entries(module.settings).map(([key, setting]) => [key, setting.parse(raw[key] ?? setting.default ?? '')]));
      const provider = module.create(values, stub);
      const sms = { channel: 'sms', sendId: 's1', verificationId: 'v1', to: '+2348031234567', from: '+2349010000000', text: 'Your code is 123456', code: '123456' } as const;
      const result = await provider.send({ ...sms, codeIsGiven: true }, AbortSignal.timeout(2000));
      assert.equal(result.kind, 'permanent', `${name}: ${JSON.stringify(result)}`);
      await provider.stop();
    }
  });
});
