import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { riskRules, type RiskRule, type RuleMode } from '../../src/domain/risk.js';
import { sendRules } from '../../src/domain/rules/index.js';
import { SendJudge } from '../../src/domain/rules/judge-send.js';
import type { RuleDeps } from '../../src/domain/rules/rule-deps.js';
import { Judgement, sendRule, type Send } from '../../src/domain/rules/send-rule.js';
import { TestClock } from '../support/clock.js';

const send: Send = {
  kind: 'create',
  clientId: 'client',
  settings: null,
  now: new Date('2026-12-08T09:00:00Z'),
  phone: { e164: '+2348031234567', countryCode: '+234', region: 'NG' },
  signals: null,
  captchaToken: null,
  relayed: false,
  testNumber: false,
  allowed: false,
  type: 'SEND_SMS',
  workflow: [],
  current: null,
};
const deps = { clock: new TestClock() } as unknown as RuleDeps;
const limited = (rule: RiskRule) =>
  sendRule({ rule, decide: () => ({ rule, refusal: { kind: 'rate-limited', reason: 'phone', retryAfterSeconds: 1 } }) as const });

describe('the risk rules', () => {
  it('are one list naming every rule once', () => {
    assert.deepEqual([...sendRules.map((r) => r.rule)].sort(), Object.keys(riskRules).sort());
  });

  it('hear every rule that objects, each in its mode; the first enforced one refuses; one off is not run', async () => {
    let offRan = false;
    const off = sendRule<true>({
      rule: 'budget',
      prepare: () => {
        offRan = true;
        return true;
      },
    });
    const modes: Partial<Record<RiskRule, RuleMode>> = { ip: 'shadow', budget: 'off' };
    const judge = new SendJudge([limited('ip'), limited('network'), limited('device'), off], deps);
    const j = new Judgement((rule) => modes[rule] ?? 'enforce');
    const prepared = await judge.prepare(send, j, null);
    const refused = await judge.decide(send, j, { kind: 'create', history: {} as never, query: {} as never, known: false }, prepared);
    assert.equal(offRan, false);
    assert.deepEqual(j.heard, [
      { factor: 'ip_concentration', rule: 'ip', mode: 'shadow' },
      { factor: 'ip_concentration', rule: 'network', mode: 'enforce' },
      { factor: 'device_reuse', rule: 'device', mode: 'enforce' },
    ]);
    assert.deepEqual(refused?.refusal, { kind: 'rate-limited', reason: 'phone', retryAfterSeconds: 1 });
  });

  it('give back what was taken when a later rule fails before the transaction', async () => {
    const given: string[] = [];
    const taking = (rule: RiskRule) => sendRule<string>({ rule, prepare: () => rule, giveBack: (p) => void given.push(p) });
    const failing = sendRule({ rule: 'budget', prepare: () => Promise.reject(new Error('spend store down')) });
    const judge = new SendJudge([taking('daily-quota'), taking('new-country'), failing], deps);
    await assert.rejects(judge.prepare(send, new Judgement(() => 'enforce'), null), /spend store down/);
    assert.deepEqual(given, ['daily-quota', 'new-country']);
  });

  it("merge each rule's part of the create's one read, and lock what it counts", () => {
    const judge = new SendJudge(sendRules.filter((r) => ['ip', 'network', 'device', 'phone'].includes(r.rule)), {
      ...deps,
      policy: { signals: { ipCount: 3, networkCount: 5, deviceCount: 2, windowSeconds: 600 }, phoneLimit: { windowSeconds: 3600, cooldownSeconds: 30, maxPerWindow: 5 } },
    } as unknown as RuleDeps);
    const withSignals: Send = { ...send, signals: { ip: { address: '203.0.113.7', network: '203.0.113.0/24' }, deviceId: 'd1', userAgent: null, appVersion: null, platform: null } };
    const j = new Judgement(() => 'enforce');
    return judge.prepare(withSignals, j, null).then((prepared) => {
      const query = judge.query(withSignals, j, prepared);
      assert.deepEqual(
        query.signals.keys.map((k) => k.kind),
        ['ip', 'network', 'device'],
      );
      assert.equal(query.lookBackFrom.getTime(), send.now.getTime() - 3600_000);
      // The address is covered by its network's lock.
      assert.deepEqual(judge.locks(query).sort(), ['client|+2348031234567', 'signal|device|client|d1', 'signal|network|client|203.0.113.0/24']);
    });
  });
});
