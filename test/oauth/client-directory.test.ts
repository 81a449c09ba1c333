import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultClientSettings } from '../../src/domain/client-settings.js';
import type { Client, ClientStore } from '../../src/oauth/client.js';
import { ClientDirectory } from '../../src/oauth/client-directory.js';

const client: Client = {
  id: '00000000-0000-4000-8000-000000000001',
  name: 'shop',
  secretHash: 'aa',
  scopes: ['otp:send'],
  webhookSecret: 'whsec_x',
  previousWebhookSecret: null,
  previousWebhookSecretExpiresAt: null,
  disabledAt: null,
  createdAt: new Date(0),
  settings: defaultClientSettings,
};

/** A store whose reads are answered by the test, so that a change can land while a read is under way. */
class HeldStore implements ClientStore {
  readonly pending: ((c: Client | null) => void)[] = [];
  find(): Promise<Client | null> {
    return new Promise((resolve) => this.pending.push(resolve));
  }
  insert(): Promise<void> {
    throw new Error('not used');
  }
  list(): Promise<Client[]> {
    throw new Error('not used');
  }
  count(): Promise<number> {
    throw new Error('not used');
  }
  update(): Promise<Client | null> {
    throw new Error('not used');
  }
}

describe('ClientDirectory', () => {
  it('does not keep a read that began before a forget (it may be the client as it was before the change)', async () => {
    const store = new HeldStore();
    let now = 0;
    const directory = new ClientDirectory(store, () => now);
    const first = directory.get(client.id);
    await Promise.resolve();
    assert.equal(store.pending.length, 1);
    // The client is disabled elsewhere and its announcement arrives while the first read is still under way.
    directory.forget(client.id);
    store.pending[0]?.(client);
    assert.equal((await first)?.disabledAt, null, 'the caller that asked before the change gets what was read');
    now += 1;
    const second = directory.get(client.id);
    await Promise.resolve();
    assert.equal(store.pending.length, 2, 'the next lookup reads the database again');
    const disabled = { ...client, disabledAt: new Date(1) };
    store.pending[1]?.(disabled);
    assert.deepEqual((await second)?.disabledAt, new Date(1));
    assert.deepEqual((await directory.get(client.id))?.disabledAt, new Date(1), 'and that read is kept');
    assert.equal(store.pending.length, 2);
  });
});
