import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { PeriodicTask } from '../../src/jobs/periodic-task.js';

describe('periodic tasks', () => {
  it('runs at start by default, or first after the delay it is given, then every interval', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const runs = { atStart: 0, delayed: 0 };
      const failed = (name: string, err: unknown) => assert.fail(`${name}: ${String(err)}`);
      const atStart = new PeriodicTask('at-start', 1_000, async () => ((runs.atStart += 1), false), failed);
      const delayed = new PeriodicTask('delayed', 1_000, async () => ((runs.delayed += 1), false), failed, 5_000);
      atStart.start();
      delayed.start();
      const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
      mock.timers.tick(0);
      await settle();
      assert.deepEqual(runs, { atStart: 1, delayed: 0 });
      mock.timers.tick(4_999);
      await settle();
      assert.equal(runs.delayed, 0, 'not before its first delay');
      mock.timers.tick(1);
      await settle();
      assert.equal(runs.delayed, 1);
      mock.timers.tick(1_000);
      await settle();
      assert.equal(runs.delayed, 2, 'then every interval');
      await Promise.all([atStart.stop(), delayed.stop()]);
    } finally {
      mock.timers.reset();
    }
  });
});
