import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import { expectOAuthError, freshAddress, isoMillis } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/** Contract 2: POST /oauth/token and /oauth2/token, by outcome. */
forEachDatabase('token endpoint', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { AUTH_FAILURE_LIMIT: '4', TOKEN_TTL_SECONDS: '900' } });
  });
  after(() => h.close());

  const formType = 'application/x-www-form-urlencoded';

  function post(
    url: string,
    payload: string | object | undefined,
    options: { contentType?: string; headers?: Record<string, string>; address?: string } = {},
  ): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.contentType !== undefined) headers['content-type'] = options.contentType;
    return h.app.inject({
      method: 'POST',
      url,
      headers,
      remoteAddress: options.address ?? freshAddress(),
      ...(payload !== undefined && { payload }),
    });
  }

  const form = (fields: [string, string][]) => new URLSearchParams(fields).toString();
  const creds = (c: ClientCredentials): [string, string][] => [
    ['client_id', c.clientId],
    ['client_secret', c.clientSecret],
  ];
  const basic = (id: string, secret: string) =>
    `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

  function assertNoStore(res: LightMyRequestResponse): void {
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['pragma'], 'no-cache');
  }

  describe('happy', () => {
    it('issues a token for form client_id/client_secret, in the seed shape plus the RFC 6749 fields', async () => {
      const c = await h.client(['otp:send', 'otp:verify']);
      const res = await post('/oauth/token', form([['grant_type', 'client_credentials'], ...creds(c), ['scope', 'otp:send']]), {
        contentType: formType,
      });
      assert.equal(res.statusCode, 200, res.body);
      assertNoStore(res);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), [
        'accessToken',
        'accessTokenExpiresAt',
        'access_token',
        'expires_in',
        'scope',
        'token_type',
      ]);
      assert.equal(typeof body.accessToken, 'string');
      assert.ok(body.accessToken.length > 20);
      assert.equal(body.access_token, body.accessToken);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 900);
      assert.match(body.accessTokenExpiresAt, isoMillis);
      assert.equal(Date.parse(body.accessTokenExpiresAt), h.clock.now().getTime() + 900_000);
      assert.deepEqual(body.scope, ['otp:send']);
      assert.ok(!res.body.includes(c.clientSecret), 'the secret is never echoed');
    });

    it('accepts a form content type with a charset parameter', async () => {
      const c = await h.client(['otp:send']);
      const res = await post('/oauth/token', form([['grant_type', 'client_credentials'], ...creds(c)]), {
        contentType: 'application/x-www-form-urlencoded;charset=UTF-8',
      });
      assert.equal(res.statusCode, 200, res.body);
    });

    it('accepts a JSON body', async () => {
      const c = await h.client(['otp:verify']);
      const res = await post('/oauth/token', {
        grant_type: 'client_credentials',
        client_id: c.clientId,
        client_secret: c.clientSecret,
        scope: 'otp:verify',
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().scope, ['otp:verify']);
      assertNoStore(res);
    });

    it('ignores unknown JSON fields, whatever their type (contract 1)', async () => {
      const c = await h.client(['otp:send']);
      const res = await post('/oauth/token', {
        grant_type: 'client_credentials',
        client_id: c.clientId,
        client_secret: c.clientSecret,
        extra: { nested: [1, 2] },
        other: 7,
      });
      assert.equal(res.statusCode, 200, res.body);
    });

    it('accepts HTTP Basic with the id and secret form-url-decoded after base64 (RFC 6749 2.3.1)', async () => {
      const c = await h.client(['otp:send']);
      // Percent-encode every character, so the server must decode to match.
      const everyChar = (s: string) => [...s].map((ch) => `%${ch.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
      const header = `Basic ${Buffer.from(`${everyChar(c.clientId)}:${everyChar(c.clientSecret)}`).toString('base64')}`;
      const res = await post('/oauth/token', form([['grant_type', 'client_credentials']]), {
        contentType: formType,
        headers: { authorization: header },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().scope, ['otp:send']);
    });

    it('grants the registered scopes when scope is omitted', async () => {
      const c = await h.client(['otp:send', 'otp:verify', 'lookup:status']);
      const res = await post('/oauth/token', form([['grant_type', 'client_credentials'], ...creds(c)]), { contentType: formType });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual([...res.json().scope].sort(), ['lookup:status', 'otp:send', 'otp:verify']);
    });

    it('grants a subset of the registered scopes', async () => {
      const c = await h.client(['otp:send', 'otp:verify']);
      const res = await post('/oauth/token', form([['grant_type', 'client_credentials'], ...creds(c), ['scope', 'otp:verify']]), {
        contentType: formType,
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().scope, ['otp:verify']);
      const token = res.json().accessToken as string;
      const fetched = await h.call('GET', '/v1/otp/00000000-0000-4000-8000-000000000000', token);
      assert.equal(fetched.statusCode, 404, 'the token is accepted on /v1');
      const create = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: '08031234567' });
      assert.equal(create.statusCode, 403, 'but only for its scopes');
    });

    it('answers /oauth2/token with a pure RFC 6749 body (scope as a string)', async () => {
      const c = await h.client(['otp:send', 'otp:verify']);
      const res = await post('/oauth2/token', form([['grant_type', 'client_credentials'], ['scope', 'otp:send otp:verify']]), {
        contentType: formType,
        headers: { authorization: basic(c.clientId, c.clientSecret) },
      });
      assert.equal(res.statusCode, 200, res.body);
      assertNoStore(res);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 900);
      assert.equal(body.scope, 'otp:send otp:verify');
      const fetched = await h.call('GET', '/v1/otp/00000000-0000-4000-8000-000000000000', body.access_token);
      assert.equal(fetched.statusCode, 404, fetched.body);
    });

    it('serves RFC 8414 metadata naming /oauth2/token', async () => {
      const res = await h.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: { host: 'otp.example:8443' } });
      assert.equal(res.statusCode, 200);
      const meta = res.json();
      assert.equal(meta.issuer, 'http://otp.example:8443');
      assert.equal(meta.token_endpoint, 'http://otp.example:8443/oauth2/token');
      assert.deepEqual(meta.grant_types_supported, ['client_credentials']);
      assert.deepEqual([...meta.token_endpoint_auth_methods_supported].sort(), ['client_secret_basic', 'client_secret_post']);
      assert.deepEqual([...meta.scopes_supported].sort(), ['deposit:request', 'lookup:request', 'lookup:status', 'one-time-password-sms:send-validate', 'otp:send', 'otp:verify']);
    });
  });

  describe('error', () => {
    it('refuses two client authentication methods in one request', async () => {
      const c = await h.client(['otp:send']);
      const res = await post('/oauth/token', form([['grant_type', 'client_credentials'], ...creds(c)]), {
        contentType: formType,
        headers: { authorization: basic(c.clientId, c.clientSecret) },
      });
      expectOAuthError(res, 400, 'invalid_request');
      const idOnly = await post('/oauth/token', form([['grant_type', 'client_credentials'], ['client_id', c.clientId]]), {
        contentType: formType,
        headers: { authorization: basic(c.clientId, c.clientSecret) },
      });
      expectOAuthError(idOnly, 400, 'invalid_request');
    });

    for (const name of ['grant_type', 'client_id', 'client_secret', 'scope']) {
      it(`refuses a repeated ${name}`, async () => {
        const c = await h.client(['otp:send']);
        const fields: [string, string][] = [['grant_type', 'client_credentials'], ...creds(c), ['scope', 'otp:send']];
        const value = fields.find(([n]) => n === name)?.[1] ?? '';
        const res = await post('/oauth/token', form([...fields, [name, value]]), { contentType: formType });
        expectOAuthError(res, 400, 'invalid_request');
      });
    }

    for (const contentType of ['text/plain', 'multipart/form-data; boundary=x', 'application/xml', 'application/octet-stream']) {
      it(`refuses content type ${contentType}`, async () => {
        const c = await h.client(['otp:send']);
        const res = await post('/oauth/token', form([['grant_type', 'client_credentials'], ...creds(c)]), { contentType });
        expectOAuthError(res, 400, 'invalid_request');
      });
    }

    for (const path of ['/oauth/token', '/oauth2/token']) {
      it(`refuses credentials in the query string of ${path} (RFC 6749 2.3.1), naming them`, async () => {
        const c = await h.client(['otp:send']);
        const body = form([['grant_type', 'client_credentials'], ...creds(c)]);
        const res = await post(`${path}?client_secret=${encodeURIComponent(c.clientSecret)}`, body, { contentType: formType });
        expectOAuthError(res, 400, 'invalid_request');
        assert.match(String(res.json().error_description), /client_secret/);
        assert.ok(!res.body.includes(c.clientSecret));
        assertNoStore(res);
        const both = await post(`${path}?client_id=${c.clientId}&client_secret=x`, undefined);
        expectOAuthError(both, 400, 'invalid_request');
        assert.match(String(both.json().error_description), /client_id, client_secret/);
        const ok = await post(`${path}?unrelated=1`, body, { contentType: formType });
        assert.equal(ok.statusCode, 200, 'other query parameters are no reason to refuse');
      });
    }

    it('refuses a JSON body that repeats a token parameter as a key (JSON.parse would keep the last)', async () => {
      const c = await h.client(['otp:send']);
      const head = `{"grant_type":"client_credentials","client_id":${JSON.stringify(c.clientId)}`;
      for (const repeat of ['"client_secret"', '"client\\u005fsecret"']) {
        const body = `${head},"client_secret":"cs_wrong",${repeat}:${JSON.stringify(c.clientSecret)}}`;
        const res = await post('/oauth/token', body, { contentType: 'application/json' });
        expectOAuthError(res, 400, 'invalid_request');
        assert.match(String(res.json().error_description), /client_secret/);
      }
      const nested = `${head},"client_secret":${JSON.stringify(c.clientSecret)},"x":{"client_secret":"a","y":["client_secret"]}}`;
      assert.equal((await post('/oauth/token', nested, { contentType: 'application/json' })).statusCode, 200, 'a nested key is no repeat');
    });

    it('refuses a request without a body', async () => {
      expectOAuthError(await post('/oauth/token', undefined), 400, 'invalid_request');
      expectOAuthError(await post('/oauth2/token', '', { contentType: formType }), 400, 'invalid_request');
    });

    it('refuses malformed JSON, a JSON array, and a token parameter that is not a string', async () => {
      const c = await h.client(['otp:send']);
      expectOAuthError(await post('/oauth/token', '{"grant_type":', { contentType: 'application/json' }), 400, 'invalid_request');
      expectOAuthError(await post('/oauth/token', '[1,2]', { contentType: 'application/json' }), 400, 'invalid_request');
      const res = await post('/oauth/token', { grant_type: 'client_credentials', client_id: c.clientId, client_secret: [c.clientSecret] });
      expectOAuthError(res, 400, 'invalid_request');
    });

    it('refuses a missing client_secret or client_id', async () => {
      const c = await h.client(['otp:send']);
      expectOAuthError(
        await post('/oauth/token', form([['grant_type', 'client_credentials'], ['client_id', c.clientId]]), { contentType: formType }),
        400,
        'invalid_request',
      );
      expectOAuthError(
        await post('/oauth/token', form([['grant_type', 'client_credentials'], ['client_secret', c.clientSecret]]), {
          contentType: formType,
        }),
        400,
        'invalid_request',
      );
    });

    it('refuses a malformed Basic header', async () => {
      for (const authorization of ['Basic !!!', 'Basic ' + Buffer.from('no-colon').toString('base64'), 'Basic ' + Buffer.from('%zz:x').toString('base64')]) {
        const res = await post('/oauth/token', form([['grant_type', 'client_credentials']]), {
          contentType: formType,
          headers: { authorization },
        });
        expectOAuthError(res, 400, 'invalid_request');
      }
    });

    it('answers an unknown client with 401 invalid_client', async () => {
      const res = await post(
        '/oauth/token',
        form([['grant_type', 'client_credentials'], ['client_id', '6f1c3a52-8a43-4b8e-9d9c-0d5a3e1c2b7a'], ['client_secret', 'cs_nope']]),
        { contentType: formType },
      );
      expectOAuthError(res, 401, 'invalid_client');
      assert.equal(res.headers['www-authenticate'], undefined, 'no Basic challenge when Basic was not used');
      const notUuid = await post('/oauth/token', form([['grant_type', 'client_credentials'], ['client_id', 'x'], ['client_secret', 'y']]), {
        contentType: formType,
      });
      expectOAuthError(notUuid, 401, 'invalid_client');
    });

    it('answers a wrong secret with 401 invalid_client, the same answer as for an unknown client', async () => {
      const c = await h.client(['otp:send']);
      const wrong = await post('/oauth/token', form([['grant_type', 'client_credentials'], ['client_id', c.clientId], ['client_secret', `${c.clientSecret}x`]]), {
        contentType: formType,
      });
      expectOAuthError(wrong, 401, 'invalid_client');
      const unknown = await post(
        '/oauth/token',
        form([['grant_type', 'client_credentials'], ['client_id', '6f1c3a52-8a43-4b8e-9d9c-0d5a3e1c2b7a'], ['client_secret', c.clientSecret]]),
        { contentType: formType },
      );
      assert.deepEqual(wrong.json(), unknown.json());
    });

    it('adds WWW-Authenticate: Basic to invalid_client when Basic was used', async () => {
      const c = await h.client(['otp:send']);
      for (const [id, secret] of [
        [c.clientId, 'cs_wrong'],
        ['6f1c3a52-8a43-4b8e-9d9c-0d5a3e1c2b7a', c.clientSecret],
      ] as const) {
        const res = await post('/oauth2/token', form([['grant_type', 'client_credentials']]), {
          contentType: formType,
          headers: { authorization: basic(id, secret) },
        });
        expectOAuthError(res, 401, 'invalid_client');
        assert.match(String(res.headers['www-authenticate']), /^Basic\b/);
      }
    });

    it('answers a disabled client with 401 invalid_client', async () => {
      const c = await h.client(['otp:send']);
      await h.services.clients.disable(c.clientId);
      const res = await post('/oauth/token', form([['grant_type', 'client_credentials'], ...creds(c)]), { contentType: formType });
      expectOAuthError(res, 401, 'invalid_client');
    });

    it('answers another grant type with unsupported_grant_type, and a missing one with invalid_request', async () => {
      const c = await h.client(['otp:send']);
      for (const grant of ['password', 'authorization_code', 'refresh_token', 'CLIENT_CREDENTIALS']) {
        const res = await post('/oauth/token', form([['grant_type', grant], ...creds(c)]), { contentType: formType });
        expectOAuthError(res, 400, 'unsupported_grant_type');
      }
      expectOAuthError(await post('/oauth/token', form(creds(c)), { contentType: formType }), 400, 'invalid_request');
    });

    it('answers an unknown scope, or one the client is not registered for, with invalid_scope', async () => {
      const c = await h.client(['otp:send']);
      for (const scope of ['admin', 'otp:send admin', 'otp:verify', 'otp:send lookup:request', '']) {
        const res = await post('/oauth/token', form([['grant_type', 'client_credentials'], ...creds(c), ['scope', scope]]), {
          contentType: formType,
        });
        expectOAuthError(res, 400, 'invalid_scope');
      }
    });

    it('answers /oauth2/token errors the same way', async () => {
      const c = await h.client(['otp:send']);
      expectOAuthError(
        await post('/oauth2/token', form([['grant_type', 'password'], ...creds(c)]), { contentType: formType }),
        400,
        'unsupported_grant_type',
      );
      expectOAuthError(
        await post('/oauth2/token', form([['grant_type', 'client_credentials'], ...creds(c), ['scope', 'otp:verify']]), {
          contentType: formType,
        }),
        400,
        'invalid_scope',
      );
      expectOAuthError(await post('/oauth2/token', 'x', { contentType: 'text/plain' }), 400, 'invalid_request');
    });
  });

  describe('security', () => {
    it('slows down repeated failed authentication from one address with 429 (AUTH_FAILURE_LIMIT)', async () => {
      const c = await h.client(['otp:send']);
      const address = freshAddress();
      const bad = form([['grant_type', 'client_credentials'], ['client_id', c.clientId], ['client_secret', 'cs_guess']]);
      for (let i = 0; i < 4; i++) {
        expectOAuthError(await post('/oauth/token', bad, { contentType: formType, address }), 401, 'invalid_client');
      }
      const limited = await post('/oauth/token', bad, { contentType: formType, address });
      assert.equal(limited.statusCode, 429, limited.body);
      assert.equal(typeof limited.json().error, 'string');
      assert.equal(typeof limited.json().error_description, 'string');
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${String(retryAfter)}`);
      // Even the right secret waits, from that address; another address is not affected.
      const good = form([['grant_type', 'client_credentials'], ...creds(c)]);
      assert.equal((await post('/oauth/token', good, { contentType: formType, address })).statusCode, 429);
      assert.equal((await post('/oauth/token', good, { contentType: formType })).statusCode, 200);
      // The window passes.
      h.clock.advance(60_000);
      assert.equal((await post('/oauth/token', good, { contentType: formType, address })).statusCode, 200);
    });

    it('never locks another client out behind the same address', async () => {
      const [a, b] = [await h.client(['otp:send']), await h.client(['otp:send'])];
      const address = freshAddress();
      const bad = form([['grant_type', 'client_credentials'], ['client_id', a.clientId], ['client_secret', 'cs_guess']]);
      for (let i = 0; i < 5; i++) await post('/oauth/token', bad, { contentType: formType, address });
      assert.equal((await post('/oauth/token', bad, { contentType: formType, address })).statusCode, 429);
      const goodB = form([['grant_type', 'client_credentials'], ...creds(b)]);
      assert.equal((await post('/oauth/token', goodB, { contentType: formType, address })).statusCode, 200, 'client B behind the same address');
    });

    it('does not count successful authentication as failures', async () => {
      const c = await h.client(['otp:send']);
      const address = freshAddress();
      const good = form([['grant_type', 'client_credentials'], ...creds(c)]);
      for (let i = 0; i < 8; i++) assert.equal((await post('/oauth/token', good, { contentType: formType, address })).statusCode, 200);
    });

    it('stores client secrets only as a hash', async () => {
      const c = await h.client(['otp:send']);
      const row = await h.services.db.db.selectFrom('clients').selectAll().where('id', '=', c.clientId).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(c.clientSecret));
      assert.ok(c.clientSecret.length >= 40, 'a high-entropy secret');
    });

    it('never answers an error with a token or a stack trace', async () => {
      const res = await post('/oauth/token', '{"grant_type": "client_credentials", "client_id": 1e999}', { contentType: 'application/json' });
      expectOAuthError(res, 400, 'invalid_request');
      assert.ok(!('access_token' in res.json()));
    });
  });
});
