import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InForce } from '../../src/domain/in-force.js';

describe('InForce', () => {
  it('reads in turn: the periodic read held back past a read asked by a change does not put the old table back', async () => {
    let rows = ['before'];
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let reads = 0;
    const table = new InForce<readonly string[], string>(
      {
        all: async () => {
          const now = rows;
          if ((reads += 1) === 1) await held;
          return now;
        },
      },
      (r) => r,
    );
    const periodic = table.refresh();
    await new Promise((resolve) => setImmediate(resolve));
    rows = ['after'];
    const announced = table.refresh();
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await Promise.all([periodic, announced]);
    assert.deepEqual(table.current(), ['after']);
  });

  it('a failed read does not stop the next one', async () => {
    let fail = true;
    const table = new InForce<readonly string[], string>({ all: async () => (fail ? Promise.reject(new Error('down')) : ['row']) }, (r) => r);
    await assert.rejects(table.refresh(), /down/);
    fail = false;
    await table.refresh();
    assert.deepEqual(table.current(), ['row']);
  });
});
