import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CarrierChecker,
  stepPastForward,
  type CarrierCheck,
  type CarrierCheckName,
  type CarrierOutcome,
  type Wait,
} from '../../src/domain/carrier-checks.js';
import { TestClock } from '../support/clock.js';

/** A peer the test answers by hand: each question waits until the test settles it. */
class HandPeer implements CarrierCheck {
  readonly asked: { e164: string; signal: AbortSignal; settle: (flagged: boolean | Error) => void }[] = [];
  flagged(e164: string, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.asked.push({ e164, signal, settle: (v) => (v instanceof Error ? reject(v) : resolve(v)) });
    });
  }
  settleLast(v: boolean | Error): void {
    const last = this.asked.at(-1);
    assert.ok(last, 'a question was asked');
    last.settle(v);
  }
}

/** A time bound the test ends by hand (no real time passes). */
function handWait(): { wait: Wait; expire: () => void; pending: () => number } {
  const waiting: (() => void)[] = [];
  return {
    wait: (_ms, signal) =>
      new Promise<void>((resolve) => {
        waiting.push(resolve);
        // Aborted: the question was answered first, and the bound is no longer waited on.
        signal.addEventListener(
          'abort',
          () => {
            const i = waiting.indexOf(resolve);
            if (i !== -1) waiting.splice(i, 1);
            resolve();
          },
          { once: true },
        );
      }),
    expire: () => waiting.splice(0).forEach((r) => r()),
    pending: () => waiting.length,
  };
}

function checker(maxEntries = 100) {
  const clock = new TestClock();
  const peer = new HandPeer();
  const bound = handWait();
  const seen: [CarrierCheckName, CarrierOutcome][] = [];
  const check = new CarrierChecker('sim_swap', peer, {
    clock,
    policy: { cacheSeconds: 60, timeoutMs: 1000, maxEntries },
    wait: bound.wait,
    observer: { carrierChecked: (name, outcome) => seen.push([name, outcome]) },
  });
  return { clock, peer, bound, seen, check };
}

/** Lets the settled promises run their continuations. */
const settled = () => new Promise((r) => setImmediate(r));

describe('carrier checks (contract 18)', () => {
  it('keeps an answer per number for the cache time, on the injected clock, and asks again after it', async () => {
    const { clock, peer, seen, check } = checker();
    const first = check.outcome('+2348030000001');
    peer.settleLast(true);
    assert.equal(await first, 'flagged');
    assert.equal(await check.outcome('+2348030000001'), 'flagged', 'kept: no question asked');
    assert.equal(peer.asked.length, 1);
    clock.advance(59_999);
    assert.equal(await check.outcome('+2348030000001'), 'flagged');
    assert.equal(peer.asked.length, 1);
    clock.advance(1);
    const again = check.outcome('+2348030000001');
    assert.equal(peer.asked.length, 2, 'asked again once the cache time is over');
    peer.settleLast(false);
    assert.equal(await again, 'clear');
    assert.deepEqual(seen, [
      ['sim_swap', 'flagged'],
      ['sim_swap', 'clear'],
    ], 'only questions asked of the peer are counted');
  });

  it('a failure or a time-out lets the send through, is not kept, and a time-out ends the question', async () => {
    const { peer, bound, seen, check } = checker();
    const failed = check.outcome('+2348030000002');
    peer.settleLast(new Error('503'));
    assert.equal(await failed, 'failed');
    const slow = check.outcome('+2348030000002');
    assert.equal(peer.asked.length, 2, 'a failure is not kept');
    bound.expire();
    assert.equal(await slow, 'timeout');
    assert.equal(peer.asked[1]?.signal.aborted, true, "the peer's request is ended");
    // An answer after the time-out changes nothing.
    peer.settleLast(true);
    await settled();
    const third = check.outcome('+2348030000002');
    assert.equal(peer.asked.length, 3, 'a time-out is not kept');
    peer.settleLast(false);
    assert.equal(await third, 'clear');
    assert.equal(bound.pending(), 0, 'no time bound left waiting once answered');
    assert.deepEqual(seen.map(([, o]) => o), ['failed', 'timeout', 'clear']);
  });

  it('concurrent sends to one number share one question', async () => {
    const { peer, check } = checker();
    const a = check.outcome('+2348030000003');
    const b = check.outcome('+2348030000003');
    assert.equal(peer.asked.length, 1);
    peer.settleLast(true);
    assert.deepEqual(await Promise.all([a, b]), ['flagged', 'flagged']);
  });

  it('keeps at most maxEntries numbers, dropping the oldest answer first', async () => {
    const { peer, check } = checker(2);
    for (const n of ['+2348030000011', '+2348030000012', '+2348030000013']) {
      const o = check.outcome(n);
      peer.settleLast(false);
      await o;
    }
    assert.equal(peer.asked.length, 3);
    void check.outcome('+2348030000013');
    void check.outcome('+2348030000012');
    assert.equal(peer.asked.length, 3, 'the two newest are kept');
    void check.outcome('+2348030000011');
    assert.equal(peer.asked.length, 4, 'the oldest was dropped');
  });

  it("a forwarded line's call goes to the workflow's first step that does not ring", () => {
    assert.equal(stepPastForward(['SEND_SMS', 'WHATSAPP']), 1);
    assert.equal(stepPastForward(['DROPPED_CALL', 'WHATSAPP']), 2);
    assert.equal(stepPastForward(['DROPPED_CALL']), null);
    assert.equal(stepPastForward([]), null);
  });
});
