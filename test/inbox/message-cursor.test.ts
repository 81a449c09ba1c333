import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InboxMessage } from '../../src/inbox/inbox-message.js';
import { MessageCursor } from '../../src/inbox/message-cursor.js';

const t0 = Date.parse('2026-11-21T09:30:00.000Z');

function message(id: number, atMs: number): InboxMessage {
  return {
    id,
    at: new Date(atMs).toISOString(),
    channel: 'sms',
    to: '+2348012345678',
    from: '+2349010000000',
    text: `code ${id}`,
    callerId: null,
    code: '123456',
    verificationId: '00000000-0000-4000-8000-000000000001',
    provider: 'log',
    testNumber: false,
    state: null,
  };
}

describe('MessageCursor', () => {
  it('gives each message once, in the order read', () => {
    const cursor = new MessageCursor(10_000);
    const now = new Date(t0);
    assert.deepEqual(cursor.fresh([message(1, t0), message(2, t0)], now).map((m) => m.id), [1, 2]);
    assert.deepEqual(cursor.fresh([message(1, t0), message(2, t0), message(3, t0)], now).map((m) => m.id), [3]);
    assert.deepEqual(cursor.window(now), { afterId: 3, since: new Date(t0 - 10_000) });
  });

  it('still gives a message whose insert committed after a higher id was read (two PostgreSQL instances)', () => {
    const cursor = new MessageCursor(10_000);
    assert.deepEqual(cursor.fresh([message(5, t0)], new Date(t0)).map((m) => m.id), [5]);
    // Id 4 was taken first but committed later: it comes back through the time window, once.
    const later = new Date(t0 + 1_000);
    assert.deepEqual(cursor.fresh([message(4, t0), message(5, t0)], later).map((m) => m.id), [4]);
    assert.deepEqual(cursor.fresh([message(4, t0), message(5, t0)], later).map((m) => m.id), []);
  });

  it('forgets what is past the window, and never gives an old message again', () => {
    const cursor = new MessageCursor(10_000);
    cursor.fresh([message(1, t0), message(2, t0)], new Date(t0));
    const muchLater = new Date(t0 + 60_000);
    assert.deepEqual(cursor.fresh([message(1, t0), message(3, t0 + 59_000)], muchLater).map((m) => m.id), [3]);
  });
});
