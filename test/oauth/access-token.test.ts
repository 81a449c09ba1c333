import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { cryptoRandom } from '../../src/domain/random.js';
import { ClientDirectory } from '../../src/oauth/client-directory.js';
import { TokenService } from '../../src/oauth/token-service.js';
import { SqlClientStore } from '../../src/store/client-store.js';
import { SqlSigningKeyStore } from '../../src/store/signing-key-store.js';
import { expectV1Error } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

const unknownId = '00000000-0000-4000-8000-000000000000';

/** Contract 2 and 5: what a bearer token is worth on /v1, and for how long. */
forEachDatabase('access tokens', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { TOKEN_TTL_SECONDS: '120' } });
  });
  after(() => h.close());

  /** A /v1 call that passes authentication ends in a 404 for an unknown id. */
  const probe = (token: string) => h.call('GET', `/v1/otp/${unknownId}`, token);

  function expectInvalidToken(res: LightMyRequestResponse): void {
    expectV1Error(res, 401, 'UNAUTHORIZED');
    assert.equal(res.headers['www-authenticate'], 'Bearer error="invalid_token"');
  }

  /** The token checker of a second instance on the same database, with its own caches. */
  const otherInstance = () =>
    TokenService.create(
      new SqlSigningKeyStore(h.services.db.db),
      h.config.TOKEN_TTL_SECONDS,
      new ClientDirectory(new SqlClientStore(h.services.db.db, false), () => h.clock.now().getTime()),
      h.clock,
      cryptoRandom,
    );

  describe('happy', () => {
    it('is accepted until TOKEN_TTL_SECONDS have passed, and refused after', async () => {
      const token = await h.token(['otp:send']);
      assert.equal((await probe(token)).statusCode, 404);
      h.clock.advance(119_000);
      assert.equal((await probe(token)).statusCode, 404, 'one second before expiry');
      h.clock.advance(1_000);
      expectInvalidToken(await probe(token));
    });

    it('is valid on another instance sharing the database, without a database read per request', async () => {
      const token = await h.token(['otp:send']);
      const other = await otherInstance();
      const grant = await other.authenticate(token);
      assert.ok(grant);
      assert.deepEqual(grant.scopes, ['otp:send']);
    });
  });

  describe('error', () => {
    it('answers no token with 401 and WWW-Authenticate: Bearer', async () => {
      const res = await h.call('GET', `/v1/otp/${unknownId}`, null);
      expectV1Error(res, 401, 'UNAUTHORIZED');
      assert.equal(res.headers['www-authenticate'], 'Bearer');
    });

    it('answers a garbage token with 401 invalid_token', async () => {
      for (const token of ['abc', 'a.b.c', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', 'x'.repeat(5000)]) {
        expectInvalidToken(await probe(token));
      }
    });

    it('answers other authorization schemes and malformed headers with 401 invalid_token', async () => {
      const token = await h.token(['otp:send']);
      for (const authorization of [`Basic ${token}`, `Bearer`, `Bearer  `, `Token ${token}`, `Bearer ${token} extra`, `${token}`]) {
        const res = await h.app.inject({ method: 'GET', url: `/v1/otp/${unknownId}`, headers: { authorization } });
        expectInvalidToken(res);
      }
    });

    it('refuses a token whose signature was altered', async () => {
      const token = await h.token(['otp:send']);
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
      expectInvalidToken(await probe(`${header}.${payload}.${flipped}`));
    });

    it('refuses a token whose claims were altered (scope escalation)', async () => {
      const token = await h.token(['otp:verify']);
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
      const forged = Buffer.from(JSON.stringify({ ...claims, scope: 'otp:send otp:verify' })).toString('base64url');
      const res = await h.call('POST', '/v1/otp/request', `${header}.${forged}.${signature}`, {
        countryCode: '+234',
        phoneNumber: '08031234567',
      });
      expectInvalidToken(res);
    });

    it('refuses a well-formed token signed with another key', async () => {
      const c = await h.client(['otp:send']);
      const iat = Math.floor(h.clock.now().getTime() / 1000);
      const forged = await new SignJWT({ scope: 'otp:send' })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: 'initial' })
        .setSubject(c.clientId)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 60)
        .sign(new Uint8Array(32).fill(7));
      expectInvalidToken(await probe(forged));
    });

    it('stops working at once when its client is disabled', async () => {
      const c = await h.client(['otp:send']);
      const token = await h.token(['otp:send'], c);
      assert.equal((await probe(token)).statusCode, 404);
      await h.services.clients.disable(c.clientId);
      expectInvalidToken(await probe(token));
    });

    it('stops working on another instance within 60 s of its client being disabled', async () => {
      const c = await h.client(['otp:send']);
      const token = await h.token(['otp:send'], c);
      const other = await otherInstance();
      assert.ok(await other.authenticate(token), 'the other instance knows the client');
      await h.services.clients.disable(c.clientId);
      h.clock.advance(60_000);
      assert.equal(await other.authenticate(token), null);
    });
  });

  describe('security', () => {
    it('answers a token without the scope with 403 INSUFFICIENT_SCOPE and the challenge', async () => {
      const verifyOnly = await h.token(['otp:verify']);
      const create = await h.call('POST', '/v1/otp/request', verifyOnly, { countryCode: '+234', phoneNumber: '08031234567' });
      expectV1Error(create, 403, 'INSUFFICIENT_SCOPE');
      assert.equal(create.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="otp:send"');
      const sendOnly = await h.token(['otp:send']);
      const verify = await h.call('POST', '/v1/otp/verify', sendOnly, { id: unknownId, otp: '123456' });
      expectV1Error(verify, 403, 'INSUFFICIENT_SCOPE');
      assert.equal(verify.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="otp:verify"');
    });

    /** A token as whoever holds the signing key (read from a data folder or backup) can make one: any claims. */
    async function madeWithTheKey(clientId: string, scope: string, lifetimeSeconds: number): Promise<string> {
      const key = await new SqlSigningKeyStore(h.services.db.db).currentKey(() => {
        throw new Error('the service made its key at start');
      });
      const iat = Math.floor(h.clock.now().getTime() / 1000);
      return new SignJWT({ scope })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: key.id })
        .setSubject(clientId)
        .setIssuedAt(iat)
        .setExpirationTime(iat + lifetimeSeconds)
        .sign(new Uint8Array(key.secret));
    }

    it('honours a token only for the scopes its client has, whatever scopes it claims', async () => {
      const c = await h.client(['lookup:request']);
      const token = await madeWithTheKey(c.clientId, 'otp:send otp:verify lookup:request', 60);
      const create = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: '08031234567' });
      expectV1Error(create, 403, 'INSUFFICIENT_SCOPE');
      expectV1Error(await probe(token), 403, 'INSUFFICIENT_SCOPE');
    });

    it('honours a token for TOKEN_TTL_SECONDS after its issue at most, whatever expiry it claims', async () => {
      const c = await h.client(['otp:send']);
      const token = await madeWithTheKey(c.clientId, 'otp:send', 10 * 365 * 86_400);
      assert.equal((await probe(token)).statusCode, 404);
      h.clock.advance(119_000);
      assert.equal((await probe(token)).statusCode, 404, 'one second before TOKEN_TTL_SECONDS');
      h.clock.advance(1_000);
      expectInvalidToken(await probe(token));
    });

    it('gives a token with only unrelated scopes no access to /v1', async () => {
      const c = await h.client(['lookup:request', 'deposit:request']);
      const token = await h.token(['lookup:request', 'deposit:request'], c);
      const res = await probe(token);
      expectV1Error(res, 403, 'INSUFFICIENT_SCOPE');
      assert.equal(res.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="otp:send otp:verify"');
    });
  });
});
