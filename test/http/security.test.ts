import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { Scope } from '../../src/domain/scopes.js';
import { createLookup, createVerification, expectV1Error, nextLocalNumber, type LookupBody, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

interface Route {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  /** The URL and body of a request that the owner of verification `v` and lookup `lookup` may make. */
  request(v: RecordBody, lookup: LookupBody): { url: string; body?: unknown };
  /** Scopes that each let a token call the route. */
  readonly allowed: readonly Scope[];
  /** Scopes that do not. */
  readonly refused: readonly Scope[];
  /** Whether the route addresses an existing verification (and so must hide other clients' ones). */
  readonly byId: boolean;
  /** Whether what it addresses is a lookup rather than a verification. */
  readonly lookup?: boolean;
}

const routes: readonly Route[] = [
  {
    name: 'POST /v1/otp/request',
    method: 'POST',
    request: () => ({ url: '/v1/otp/request', body: { countryCode: '+234', phoneNumber: nextLocalNumber() } }),
    allowed: ['otp:send'],
    refused: ['otp:verify', 'lookup:request', 'lookup:status', 'deposit:request'],
    byId: false,
  },
  {
    name: 'GET /v1/otp/{id}',
    method: 'GET',
    request: (v) => ({ url: `/v1/otp/${v.id}` }),
    allowed: ['otp:send', 'otp:verify'],
    refused: ['lookup:request', 'lookup:status', 'deposit:request'],
    byId: true,
  },
  {
    name: 'POST /v1/otp/verify',
    method: 'POST',
    request: (v) => ({ url: '/v1/otp/verify', body: { id: v.id, otp: v.otp } }),
    allowed: ['otp:verify'],
    refused: ['otp:send', 'lookup:request', 'lookup:status', 'deposit:request'],
    byId: true,
  },
  {
    name: 'POST /v1/otp/{id}/resend',
    method: 'POST',
    request: (v) => ({ url: `/v1/otp/${v.id}/resend` }),
    allowed: ['otp:send'],
    refused: ['otp:verify', 'lookup:request', 'lookup:status', 'deposit:request'],
    byId: true,
  },
  {
    name: 'POST /v1/otp/{id}/cancel',
    method: 'POST',
    request: (v) => ({ url: `/v1/otp/${v.id}/cancel` }),
    allowed: ['otp:send'],
    refused: ['otp:verify', 'lookup:request', 'lookup:status', 'deposit:request'],
    byId: true,
  },
  {
    name: 'POST /v1/lookup/request',
    method: 'POST',
    request: () => ({ url: '/v1/lookup/request', body: { countryCode: '+234', phoneNumber: nextLocalNumber() } }),
    allowed: ['lookup:request'],
    refused: ['otp:send', 'otp:verify', 'lookup:status', 'deposit:request'],
    byId: false,
  },
  {
    name: 'GET /v1/lookup/{id}',
    method: 'GET',
    request: (_v, lookup) => ({ url: `/v1/lookup/${lookup.id}` }),
    allowed: ['lookup:status'],
    refused: ['otp:send', 'otp:verify', 'lookup:request', 'deposit:request'],
    byId: true,
    lookup: true,
  },
  {
    name: 'GET /v1/stats',
    method: 'GET',
    request: () => ({ url: '/v1/stats' }),
    allowed: ['otp:send', 'otp:verify'],
    refused: ['lookup:request', 'lookup:status', 'deposit:request'],
    byId: false,
  },
];

/** Contract 2 and 5: the checks every /v1 route shares (unkey's *.security tests). */
forEachDatabase('security of /v1', (kind) => {
  let h: Harness;
  before(async () => {
    // No resend cool-down: a resend right after its create is then a success, like every other route's call.
    h = await createHarness(kind, { env: { PHONE_COOLDOWN_SECONDS: '0' } });
  });
  after(() => h.close());

  /** A verification and a lookup owned by a new client with every scope, and that client's token. */
  async function owned(): Promise<{ token: string; v: RecordBody; lookup: LookupBody }> {
    const c = await h.client(['otp:send', 'otp:verify', 'lookup:request', 'lookup:status', 'deposit:request']);
    const token = await h.token(['otp:send', 'otp:verify', 'lookup:request', 'lookup:status'], c);
    return { token, v: await createVerification(h, token), lookup: await createLookup(h, token) };
  }

  function send(route: Route, v: RecordBody, lookup: LookupBody, headers: Record<string, string>): Promise<LightMyRequestResponse> {
    const { url, body } = route.request(v, lookup);
    return h.app.inject({ method: route.method, url, headers, ...(body !== undefined && { payload: body as object }) });
  }

  for (const route of routes) {
    describe(route.name, () => {
      it('answers no token with 401 and WWW-Authenticate: Bearer', async () => {
        const { v, lookup } = await owned();
        const res = await send(route, v, lookup, {});
        expectV1Error(res, 401, 'UNAUTHORIZED');
        assert.equal(res.headers['www-authenticate'], 'Bearer');
      });

      it('refuses an access token in the query string with 400 VALIDATION_ERROR, even beside a valid header', async () => {
        const { token, v, lookup } = await owned();
        const { url, body } = route.request(v, lookup);
        for (const headers of [{}, { authorization: `Bearer ${token}` }]) {
          const res = await h.app.inject({
            method: route.method,
            url: `${url}?access_token=${encodeURIComponent(token)}`,
            headers,
            ...(body !== undefined && { payload: body as object }),
          });
          const err = expectV1Error(res, 400, 'VALIDATION_ERROR');
          assert.deepEqual(err.error.details?.map((d) => d.field), ['access_token']);
          assert.ok(!res.body.includes(token), 'the token is not echoed');
        }
      });

      it('answers a garbage token with 401 invalid_token', async () => {
        const { v, lookup, token } = await owned();
        for (const authorization of ['Bearer garbage', `Bearer ${token.slice(0, -2)}`, 'Bearer ....', `bearer ${token}x`]) {
          const res = await send(route, v, lookup, { authorization });
          expectV1Error(res, 401, 'UNAUTHORIZED');
          assert.equal(res.headers['www-authenticate'], 'Bearer error="invalid_token"');
        }
      });

      it('authenticates before it looks at the body', async () => {
        const res = await h.app.inject({
          method: route.method,
          url: route.request({ id: '00000000-0000-4000-8000-000000000000' } as RecordBody, { id: '00000000-0000-4000-8000-000000000000' } as LookupBody).url,
          headers: { 'content-type': 'text/plain' },
          payload: 'not json',
        });
        expectV1Error(res, 401, 'UNAUTHORIZED');
      });

      it('answers a token without a needed scope with 403 INSUFFICIENT_SCOPE', async () => {
        const { v, lookup } = await owned();
        for (const scope of route.refused) {
          const token = await h.token([scope], await h.client([scope]));
          const res = await send(route, v, lookup, { authorization: `Bearer ${token}` });
          expectV1Error(res, 403, 'INSUFFICIENT_SCOPE');
          assert.equal(res.headers['www-authenticate'], `Bearer error="insufficient_scope", scope="${route.allowed.join(' ')}"`);
        }
      });

      it('accepts a token with any one of the scopes the route names', async () => {
        for (const scope of route.allowed) {
          const c = await h.client([scope, 'otp:send', 'lookup:request']);
          const mine = await createVerification(h, await h.token(['otp:send'], c));
          const myLookup = await createLookup(h, await h.token(['lookup:request'], c));
          const token = await h.token([scope], c);
          const res = await send(route, mine, myLookup, { authorization: `Bearer ${token}` });
          assert.equal(res.statusCode, 200, `${scope}: ${res.body}`);
        }
      });

      if (route.byId) {
        it(`answers another client's ${route.lookup ? 'lookup' : 'verification'} with 404 and none of its data`, async () => {
          const { v, lookup } = await owned();
          const other = await h.token(route.allowed, await h.client(route.allowed));
          const res = await send(route, v, lookup, { authorization: `Bearer ${other}` });
          const body = expectV1Error(res, 404, 'NOT_FOUND');
          assert.equal(body.data, undefined);
          assert.ok(!res.body.includes(v.id) && !res.body.includes(v.phoneNumber));
          assert.ok(!res.body.includes(lookup.id) && !res.body.includes(lookup.phoneNumber));
          const row = await h.services.db.db.selectFrom('verifications').select(['status', 'counter']).where('id', '=', v.id).executeTakeFirstOrThrow();
          assert.deepEqual(row, { status: 'PENDING', counter: 0 }, 'untouched');
        });
      }
    });
  }

  describe('every response', () => {
    it('carries an x-request-id, keeping a safe one the caller sent', async () => {
      const { token, v } = await owned();
      const responses = await Promise.all([
        h.call('GET', `/v1/otp/${v.id}`, token),
        h.call('GET', `/v1/otp/${v.id}`, null),
        h.call('GET', '/v1/nope', token),
        h.call('GET', '/v1/otp/%zz', token),
        h.call('POST', '/v1/otp/request', token, 'x', { 'content-type': 'text/plain' }),
        h.call('POST', '/v1/otp/request', token, { pad: 'x'.repeat(20_000) }),
        h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: 'nope' }),
        h.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'password' } }),
        h.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' }),
        h.app.inject({ method: 'GET', url: '/healthz' }),
        h.app.inject({ method: 'GET', url: '/readyz' }),
      ]);
      for (const res of responses) {
        assert.match(String(res.headers['x-request-id']), /^[A-Za-z0-9._-]{1,64}$/, `${res.statusCode} ${res.body.slice(0, 80)}`);
      }
      const ids = responses.map((r) => r.headers['x-request-id']);
      assert.equal(new Set(ids).size, ids.length, 'each request gets its own id');
      const kept = await h.call('GET', `/v1/otp/${v.id}`, token, undefined, { 'x-request-id': 'trace-abc.123' });
      assert.equal(kept.headers['x-request-id'], 'trace-abc.123');
      for (const unsafe of ['has space', 'a'.repeat(65), 'new\\nline', '<script>']) {
        const replaced = await h.call('GET', `/v1/otp/${v.id}`, token, undefined, { 'x-request-id': unsafe });
        assert.notEqual(replaced.headers['x-request-id'], unsafe);
        assert.match(String(replaced.headers['x-request-id']), /^[A-Za-z0-9._-]{1,64}$/);
      }
    });

    it('ignores __proto__ and constructor keys in a /v1 JSON body rather than refusing it, and pollutes nothing', async () => {
      const { token } = await owned();
      for (const extra of ['"__proto__":{"polluted":true}', '"constructor":{"prototype":{"polluted":true}}']) {
        const body = `{"countryCode":"+234","phoneNumber":"${nextLocalNumber()}",${extra}}`;
        const res = await h.call('POST', '/v1/otp/request', token, body, { 'content-type': 'application/json' });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().status, true);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
      }
    });

    it('never exposes a field the record does not have (the response schema filters)', async () => {
      const { token, v } = await owned();
      const res = await h.call('GET', `/v1/otp/${v.id}`, token);
      assert.ok(!/client_?id|secret/i.test(res.body), res.body);
    });
  });
});
