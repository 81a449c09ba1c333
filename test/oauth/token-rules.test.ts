import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultClientSettings } from '../../src/domain/client-settings.js';
import { cryptoRandom } from '../../src/domain/random.js';
import type { Scope } from '../../src/domain/scopes.js';
import { hashSecret, secretMatches, type Client, type ClientStore } from '../../src/oauth/client.js';
import { ClientDirectory } from '../../src/oauth/client-directory.js';
import { ClientService } from '../../src/oauth/client-service.js';
import { OAuthError, parseBasic, TokenEndpoint, type TokenParams } from '../../src/oauth/token-endpoint.js';
import { TokenService, type SigningKeyStore } from '../../src/oauth/token-service.js';
import { TestClock } from '../support/clock.js';

/** Pure unit tests of the token endpoint's steps (contract 2), over in-memory ports. */

class MemoryClientStore implements ClientStore {
  readonly rows = new Map<string, Client>();
  reads = 0;
  async insert(client: Client) {
    this.rows.set(client.id, client);
  }
  async find(id: string) {
    this.reads += 1;
    return this.rows.get(id) ?? null;
  }
  async list() {
    return [...this.rows.values()];
  }
  async count() {
    return this.rows.size;
  }
  async update(id: string, change: Partial<Omit<Client, 'id' | 'createdAt'>>) {
    const existing = this.rows.get(id);
    if (!existing) return null;
    const updated = { ...existing, ...change };
    this.rows.set(id, updated);
    return updated;
  }
}

class MemoryKeys implements SigningKeyStore {
  private key: { id: string; secret: Buffer } | null = null;
  async currentKey(createSecret: () => Buffer) {
    this.key ??= { id: 'k1', secret: createSecret() };
    return this.key;
  }
}

class MemoryFailures {
  readonly hits = new Map<string, number>();
  count(key: string) {
    return this.hits.get(key) ?? 0;
  }
  hit(key: string) {
    this.hits.set(key, this.count(key) + 1);
  }
  msToNextWindow() {
    return 42_100;
  }
}

async function setup(maxFailures = 3) {
  const clock = new TestClock();
  const store = new MemoryClientStore();
  const directory = new ClientDirectory(store, () => clock.now().getTime());
  const clients = new ClientService(store, clock, cryptoRandom, (id) => directory.forget(id));
  const tokens = await TokenService.create(new MemoryKeys(), 600, directory, clock, cryptoRandom);
  const failures = new MemoryFailures();
  const endpoint = new TokenEndpoint(directory, tokens, failures, maxFailures);
  return { clock, store, clients, tokens, failures, endpoint };
}

const params = (entries: [string, string][]): TokenParams => {
  const out: Record<string, string[]> = {};
  for (const [k, v] of entries) (out[k] ??= []).push(v);
  return out;
};

async function refusal(promise: Promise<unknown>): Promise<OAuthError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof OAuthError, String(err));
    return err;
  }
  assert.fail('expected an OAuthError');
}

describe('HTTP Basic client credentials (RFC 6749 2.3.1)', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  it('is absent without a Basic header', () => {
    assert.equal(parseBasic(undefined), null);
    assert.equal(parseBasic('Bearer abc'), null);
    assert.equal(parseBasic(''), null);
  });

  it('form-url-decodes the id and the secret after base64', () => {
    assert.deepEqual(parseBasic(`Basic ${b64('my%20id:s%3Ac+r%2Bt')}`), { id: 'my id', secret: 's:c r+t' });
    assert.deepEqual(parseBasic(`basic ${b64('id:se:cret')}`), { id: 'id', secret: 'se:cret' }, 'scheme is case-insensitive; the first colon splits');
    assert.deepEqual(parseBasic(`Basic ${b64('id:')}`), { id: 'id', secret: '' });
  });

  it('reports a header it cannot decode as malformed', () => {
    for (const header of ['Basic ', 'Basic !!!', `Basic ${b64('nocolon')}`, `Basic ${b64('%E0%A4%A:x')}`, 'Basic a b']) {
      assert.equal(parseBasic(header), 'malformed', header);
    }
  });
});

describe('token endpoint steps', () => {
  it('issues a token carrying the granted scopes, valid until its TTL', async () => {
    const { endpoint, clients, tokens, clock } = await setup();
    const c = await clients.create('a', ['otp:send', 'otp:verify']);
    const issued = await endpoint.handle({
      params: params([['grant_type', 'client_credentials'], ['client_id', c.clientId], ['client_secret', c.clientSecret], ['scope', 'otp:send']]),
      basic: null,
      address: '1.1.1.1',
    });
    assert.deepEqual(issued.scopes, ['otp:send']);
    assert.equal(issued.expiresIn, 600);
    assert.deepEqual(issued.expiresAt, new Date(clock.now().getTime() + 600_000));
    const grant = await tokens.authenticate(issued.accessToken);
    assert.deepEqual(grant?.scopes, ['otp:send']);
    assert.equal(grant?.clientId, c.clientId);
    clock.advance(600_000);
    assert.equal(await tokens.authenticate(issued.accessToken), null);
  });

  it('checks tokens without reading the client store on every request', async () => {
    const { endpoint, clients, tokens, store } = await setup();
    const c = await clients.create('a', ['otp:send']);
    const issued = await endpoint.handle({
      params: params([['grant_type', 'client_credentials']]),
      basic: { id: c.clientId, secret: c.clientSecret },
      address: '1.1.1.1',
    });
    const before = store.reads;
    for (let i = 0; i < 20; i++) assert.ok(await tokens.authenticate(issued.accessToken));
    assert.ok(store.reads - before <= 1, `${store.reads - before} reads for 20 checks`);
  });

  it('refuses repeated parameters before authenticating, without counting a failure', async () => {
    const { endpoint, failures } = await setup();
    const err = await refusal(
      endpoint.handle({ params: params([['client_id', 'a'], ['client_id', 'b'], ['client_secret', 'x']]), basic: null, address: '2.2.2.2' }),
    );
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.status, 400);
    assert.equal(failures.count('auth:2.2.2.2'), 0);
  });

  it('counts each failed authentication of a client from an address, then refuses that pair with 429 and a retry time', async () => {
    const { endpoint, clients, failures } = await setup(2);
    const c = await clients.create('a', ['otp:send']);
    const bad = { params: params([['grant_type', 'client_credentials']]), basic: { id: c.clientId, secret: 'wrong' }, address: '3.3.3.3' };
    for (let i = 0; i < 2; i++) {
      const err = await refusal(endpoint.handle(bad));
      assert.equal(err.code, 'invalid_client');
      assert.equal(err.status, 401);
      assert.equal(err.basic, true, 'the 401 carries a Basic challenge');
    }
    assert.equal(failures.count(`auth:${c.clientId}|3.3.3.3`), 2);
    const limited = await refusal(endpoint.handle({ ...bad, basic: { id: c.clientId, secret: c.clientSecret } }));
    assert.equal(limited.status, 429);
    assert.equal(limited.retryAfterSeconds, 43);
  });

  it('refuses unknown, wrong-secret and disabled clients alike, saying why only in the private detail', async () => {
    const { endpoint, clients } = await setup(100);
    const c = await clients.create('a', ['otp:send']);
    const attempt = (id: string, secret: string) =>
      refusal(endpoint.handle({ params: params([['grant_type', 'client_credentials'], ['client_id', id], ['client_secret', secret]]), basic: null, address: '4.4.4.4' }));
    const unknown = await attempt('6f1c3a52-8a43-4b8e-9d9c-0d5a3e1c2b7a', c.clientSecret);
    const wrong = await attempt(c.clientId, 'nope');
    await clients.disable(c.clientId);
    const disabled = await attempt(c.clientId, c.clientSecret);
    for (const err of [unknown, wrong, disabled]) {
      assert.equal(err.code, 'invalid_client');
      assert.equal(err.description, 'Client authentication failed');
      assert.equal(err.basic, false);
    }
    assert.deepEqual([unknown.detail, wrong.detail, disabled.detail], ['unknown client', 'wrong secret', 'disabled client']);
  });

  it('checks the grant after the client, and the scope after the grant', async () => {
    const { endpoint, clients } = await setup(100);
    const c = await clients.create('a', ['otp:send']);
    const handle = (extra: [string, string][]) =>
      refusal(endpoint.handle({ params: params([['client_id', c.clientId], ['client_secret', c.clientSecret], ...extra]), basic: null, address: '5.5.5.5' }));
    assert.equal((await handle([])).code, 'invalid_request');
    assert.equal((await handle([['grant_type', 'password'], ['scope', 'nope']])).code, 'unsupported_grant_type');
    assert.equal((await handle([['grant_type', 'client_credentials'], ['scope', 'otp:verify']])).code, 'invalid_scope');
    assert.equal((await handle([['grant_type', 'client_credentials'], ['scope', 'nope']])).code, 'invalid_scope');
    assert.equal((await handle([['grant_type', 'client_credentials'], ['scope', ' ']])).code, 'invalid_scope');
  });

  it('grants the registered scopes when none are asked for', async () => {
    const { endpoint, clients } = await setup();
    const scopes: Scope[] = ['otp:verify', 'lookup:status'];
    const c = await clients.create('a', scopes);
    const issued = await endpoint.handle({ params: params([['grant_type', 'client_credentials']]), basic: { id: c.clientId, secret: c.clientSecret }, address: '6.6.6.6' });
    assert.deepEqual(issued.scopes, scopes);
  });

  it('stops a rotated secret at once on this instance', async () => {
    const { endpoint, clients } = await setup(100);
    const c = await clients.create('a', ['otp:send']);
    const auth = (secret: string) => endpoint.handle({ params: params([['grant_type', 'client_credentials']]), basic: { id: c.clientId, secret }, address: '7.7.7.7' });
    await auth(c.clientSecret);
    const rotated = await clients.rotateSecret(c.clientId);
    assert.ok(rotated);
    assert.equal((await refusal(auth(c.clientSecret))).code, 'invalid_client');
    assert.ok(await auth(rotated.clientSecret));
  });
});

describe('tokens issued within one second (reused, not signed again)', () => {
  /** The claims a token carries, read back by the same checker /v1 uses. */
  async function claims(tokens: TokenService, token: string) {
    const grant = await tokens.authenticate(token);
    assert.ok(grant, 'the token checks');
    return { clientId: grant.clientId, scopes: grant.scopes, expiresAt: grant.expiresAt.getTime() };
  }

  it('hands the same client and scopes the same token, and each other pair its own claims', async () => {
    const { tokens, clients, clock } = await setup();
    const a = await clients.create('a', ['otp:send', 'otp:verify']);
    const b = await clients.create('b', ['otp:send', 'otp:verify']);
    const first = await tokens.issue(a.clientId, ['otp:send']);
    assert.equal((await tokens.issue(a.clientId, ['otp:send'])).accessToken, first.accessToken);
    const otherScopes = await tokens.issue(a.clientId, ['otp:send', 'otp:verify']);
    const otherClient = await tokens.issue(b.clientId, ['otp:send']);
    assert.deepEqual(await claims(tokens, otherScopes.accessToken), { clientId: a.clientId, scopes: ['otp:send', 'otp:verify'], expiresAt: first.expiresAt.getTime() });
    assert.deepEqual(await claims(tokens, otherClient.accessToken), { clientId: b.clientId, scopes: ['otp:send'], expiresAt: first.expiresAt.getTime() });
    clock.advance(1_000);
    const later = await tokens.issue(a.clientId, ['otp:send']);
    assert.notEqual(later.accessToken, first.accessToken);
    assert.equal((await claims(tokens, later.accessToken)).expiresAt, first.expiresAt.getTime() + 1_000, 'a new second, a new expiry');
  });

  it('never mistakes one client and scope pair for another whose id and scopes join the same way', async () => {
    const { tokens, store, clock } = await setup();
    // Ids are UUIDs in practice; these two would read alike if id and scopes were simply joined with a space.
    for (const id of ['a', 'a otp:send']) {
      await store.insert({
        id,
        name: id,
        secretHash: hashSecret('s'),
        scopes: ['otp:send', 'otp:verify'],
        webhookSecret: 'whsec_x',
        previousWebhookSecret: null,
        previousWebhookSecretExpiresAt: null,
        disabledAt: null,
        createdAt: clock.now(),
        settings: defaultClientSettings,
      });
    }
    const first = await tokens.issue('a', ['otp:send', 'otp:verify']);
    const second = await tokens.issue('a otp:send', ['otp:verify']);
    assert.deepEqual(await claims(tokens, first.accessToken), { clientId: 'a', scopes: ['otp:send', 'otp:verify'], expiresAt: first.expiresAt.getTime() });
    assert.deepEqual(await claims(tokens, second.accessToken), { clientId: 'a otp:send', scopes: ['otp:verify'], expiresAt: first.expiresAt.getTime() });
  });
});

describe('client secrets (contract 2)', () => {
  it('are high-entropy, shown once, and stored as a hash that still checks', async () => {
    const { clients, store } = await setup();
    const a = await clients.create('a', ['otp:send']);
    const b = await clients.create('b', ['otp:send']);
    assert.notEqual(a.clientSecret, b.clientSecret);
    assert.ok(Buffer.from(a.clientSecret.replace(/^cs_/, ''), 'base64url').length >= 32);
    const stored = store.rows.get(a.clientId);
    assert.ok(stored);
    assert.equal(stored.secretHash, hashSecret(a.clientSecret));
    assert.ok(!JSON.stringify(stored).includes(a.clientSecret));
    assert.equal(secretMatches(a.clientSecret, stored.secretHash), true);
    assert.equal(secretMatches(b.clientSecret, stored.secretHash), false);
    assert.equal(secretMatches(a.clientSecret, 'not-hex'), false);
    assert.ok(!('clientSecret' in ((await clients.list())[0] ?? {})), 'listing never shows a secret');
  });
});
