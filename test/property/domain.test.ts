import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decidePhoneLimit, type PhoneLimitPolicy } from '../../src/domain/limits.js';
import { parseE164, parsePhone } from '../../src/domain/phone.js';
import { parseScopeList } from '../../src/domain/scopes.js';
import { codesMatch, decideVerify, type Verification, type VerificationStatus } from '../../src/domain/verification.js';
import { parseBasic } from '../../src/oauth/token-endpoint.js';

const params = { numRuns: Number(process.env.FC_NUM_RUNS ?? 200), seed: Number(process.env.FC_SEED ?? 20261121) };

const t0 = Date.parse('2026-11-21T09:30:00.000Z');

const verification = fc.record({
  status: fc.constantFrom<VerificationStatus>('PENDING', 'SUCCESS', 'FAILED', 'EXPIRED'),
  counter: fc.nat({ max: 10 }),
  otp: fc.stringMatching(/^\d{4,10}$/),
  ttlMs: fc.integer({ min: 10_000, max: 86_400_000 }),
});

function build(v: { status: VerificationStatus; counter: number; otp: string; ttlMs: number }): Verification {
  return {
    id: '6f1c3a52-8a43-4b8e-9d9c-0d5a3e1c2b7a',
    clientId: '0b8e6a4e-6f0a-4c55-9a8e-2a9d1f3c4b5d',
    createdAt: new Date(t0),
    updatedAt: new Date(t0),
    expiresAt: new Date(t0 + v.ttlMs),
    otp: v.otp,
    phoneNumber: '+2348031234567',
    countryCode: '+234',
    counter: v.counter,
    pairedNumber: '09010000000',
    pairedE164: '+2349010000000',
    sendRequests: 1,
    locale: null,
    codeWithheld: false,
    testNumber: false,
    regionCode: 'NG',
    lastSendAt: new Date(t0),
    type: 'SMS',
    status: v.status,
    failureReason: v.status === 'FAILED' ? 'MAX_ATTEMPTS' : null,
    delivery: { channel: 'SMS', provider: null, messageId: null, status: 'QUEUED', sends: 0, updatedAt: new Date(t0) },
    deliveries: [],
    workflow: [],
    fallbackAfterSeconds: 60,
    nextStepAt: null,
    failoverAt: null,
    steps: 0,
    webhookUrl: null,
    reference: null,
  };
}

describe('domain properties', () => {
  it('decideVerify: only a PENDING verification in time moves, by exactly one attempt, to a state the table allows', () => {
    fc.assert(
      fc.property(
        verification,
        fc.oneof(fc.stringMatching(/^\d{4,10}$/), fc.string()),
        fc.integer({ min: 0, max: 100_000_000 }),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        (raw, guess, elapsed, maxAttempts, useRightCode) => {
          const counter = Math.min(raw.counter, maxAttempts - 1);
          const v = build({ ...raw, counter });
          const code = useRightCode ? v.otp : guess;
          const now = new Date(t0 + elapsed);
          const d = decideVerify(v, code, now, maxAttempts);
          const inTime = now.getTime() < v.expiresAt.getTime();
          if (v.status !== 'PENDING' || !inTime) {
            assert.equal(d.kind, 'not-pending');
            assert.ok(d.kind === 'not-pending');
            assert.equal(d.current.counter, v.counter);
            assert.equal(d.current.status, v.status === 'PENDING' ? 'EXPIRED' : v.status);
            return;
          }
          assert.notEqual(d.kind, 'not-pending');
          assert.ok(d.kind !== 'not-pending');
          assert.equal(d.next.counter, v.counter + 1);
          assert.deepEqual(d.next.updatedAt, now);
          if (code === v.otp) {
            assert.equal(d.kind, 'success');
            assert.equal(d.next.status, 'SUCCESS');
          } else {
            assert.equal(d.kind, 'mismatch');
            assert.equal(d.next.status, d.next.counter >= maxAttempts ? 'FAILED' : 'PENDING');
          }
        },
      ),
      params,
    );
  });

  it('codesMatch is string equality', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        assert.equal(codesMatch(a, b), a === b);
        assert.equal(codesMatch(a, a), true);
      }),
      params,
    );
  });

  it('decidePhoneLimit: a refusal always says to wait at least a second, and an admission respects both limits', () => {
    fc.assert(
      fc.property(
        fc.record({ count: fc.integer({ min: 1, max: 10 }), windowSeconds: fc.integer({ min: 1, max: 3600 }), cooldownSeconds: fc.integer({ min: 0, max: 600 }) }),
        fc.array(fc.integer({ min: 0, max: 4_000_000 }), { maxLength: 15 }),
        (policy: PhoneLimitPolicy, agoMs) => {
          const now = new Date(t0);
          const lookBack = Math.max(policy.windowSeconds, policy.cooldownSeconds) * 1000;
          const times = agoMs.filter((a) => a < lookBack).map((a) => t0 - a);
          const inWindow = times.filter((t) => t > t0 - policy.windowSeconds * 1000);
          const history = {
            countInWindow: inWindow.length,
            oldestInWindow: inWindow.length ? new Date(Math.min(...inWindow)) : null,
            latest: times.length ? new Date(Math.max(...times)) : null,
          };
          const d = decidePhoneLimit(history, now, policy);
          if (d.allowed) {
            if (history.latest) assert.ok(history.latest.getTime() + policy.cooldownSeconds * 1000 <= t0);
            assert.ok(inWindow.length < policy.count || (history.oldestInWindow?.getTime() ?? 0) + policy.windowSeconds * 1000 <= t0);
          } else {
            assert.ok(Number.isInteger(d.retryAfterSeconds) && d.retryAfterSeconds >= 1);
            // Coming back after Retry-After, with nothing new, is admitted.
            assert.deepEqual(decidePhoneLimit(history, new Date(t0 + d.retryAfterSeconds * 1000), policy), { allowed: true });
          }
        },
      ),
      params,
    );
  });

  it('parsePhone never throws, and what it accepts round-trips', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.stringMatching(/^\+[1-9]\d{0,2}$/), fc.string()),
        fc.oneof(fc.stringMatching(/^0?\d{6,12}$/), fc.string()),
        (countryCode, phoneNumber) => {
          const p = parsePhone(countryCode, phoneNumber);
          if (!p) return;
          assert.equal(p.countryCode, countryCode);
          assert.ok(p.e164.startsWith(countryCode));
          assert.match(p.e164, /^\+[1-9]\d{4,15}$/);
          assert.match(p.local, /^\d+$/);
          assert.deepEqual(parsePhone(countryCode, p.local), p);
          assert.deepEqual(parseE164(p.e164), p);
        },
      ),
      params,
    );
  });

  it('parseBasic never throws, and decodes what a client encodes per RFC 6749 2.3.1', () => {
    const wellFormed = fc.string({ unit: 'grapheme', maxLength: 40 });
    fc.assert(
      fc.property(wellFormed.filter((s) => s.length > 0), wellFormed, (id, secret) => {
        const form = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
        const header = `Basic ${Buffer.from(`${form(id)}:${form(secret)}`).toString('base64')}`;
        assert.deepEqual(parseBasic(header), { id, secret });
      }),
      params,
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (raw) => {
        const out = parseBasic(`Basic ${raw}`);
        assert.ok(out === 'malformed' || out === null || (typeof out.id === 'string' && typeof out.secret === 'string'));
        parseBasic(raw);
      }),
      params,
    );
  });

  it('parseScopeList splits every word into known or unknown, once each', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom('otp:send', 'otp:verify', 'lookup:request', 'lookup:status', 'deposit:request', ''), fc.string()), { maxLength: 8 }),
        (words) => {
          const raw = words.join(' ');
          const { scopes, unknown } = parseScopeList(raw);
          const expected = [...new Set(raw.split(' ').filter((w) => w.length > 0))];
          assert.deepEqual([...scopes, ...unknown].sort(), [...expected].sort());
          assert.equal(new Set(scopes).size, scopes.length);
        },
      ),
      params,
    );
  });
});
