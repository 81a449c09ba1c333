import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { assertNoLeak, assertV1ErrorShape, createVerification, freshAddress, type RecordBody } from '../support/api.js';
import { createHarness, type Harness } from '../support/harness.js';
import type { ClientCredentials } from '../../src/oauth/client-service.js';

/**
 * Contract 5 by property: whatever arrives, no endpoint answers 500, every /v1 error has the one shape and every
 * token-endpoint error the RFC 6749 one. Runs on the embedded database only (the HTTP edge is what is tested).
 */

const numRuns = Number(process.env.FC_NUM_RUNS ?? 120);
const seed = Number(process.env.FC_SEED ?? 20261121);
const params = { numRuns, seed };

const recordKeys = [
  'cost', 'counter', 'country', 'countryCode', 'createdAt', 'deliveries', 'delivery', 'expiresAt', 'failureReason', 'fallback', 'id', 'otp', 'pairedNumber', 'phoneNumber', 'reference', 'risk', 'status', 'type', 'updatedAt', 'webhookUrl',
];

/** Anything, as the JSON text a client could send. */
const jsonText = fc
  .oneof(fc.anything({ maxDepth: 3 }), fc.jsonValue({ stringUnit: 'binary', maxDepth: 3 }))
  .map((v) => {
    try {
      return JSON.stringify(v) ?? 'null';
    } catch {
      return 'null';
    }
  });

/** Printable ASCII, safe as a header value. */
const headerText = fc.string({ unit: 'grapheme-ascii', maxLength: 80 });

/** Values for known fields: the right type or not, near the right shape or not. */
const anyValue = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme-ascii', maxLength: 300 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);
const countryCode = fc.oneof(fc.constantFrom('+234', '+1', '+44', '+999', '+0', '234', '+'), fc.stringMatching(/^\+\d{1,4}$/), anyValue);
const phoneNumber = fc.oneof(fc.stringMatching(/^0?[789]0\d{8}$/), fc.stringMatching(/^\d{0,20}$/), anyValue);
const createBody = fc.record(
  {
    countryCode,
    phoneNumber,
    type: fc.oneof(fc.constantFrom('SEND_SMS', 'DROPPED_CALL', 'SMS', 'send_sms', ''), anyValue),
    webhookUrl: fc.oneof(fc.webUrl(), fc.webUrl({ withQueryParameters: true, withFragments: true }).map((u) => u.replace('://', '://u:p@')), fc.constantFrom('ftp://x.y', 'http://', 'javascript:1', 'https://a.b/\u0000'), anyValue),
    reference: fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), anyValue),
    extra: anyValue,
  },
  { requiredKeys: [] },
);

const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'APPLICATION/JSON',
    'application/x-www-form-urlencoded',
    'application/x-www-form-urlencoded;charset=UTF-8',
    'text/plain',
    'text/json',
    'multipart/form-data; boundary=zz',
    'application/jsonx',
    'application/*',
    '*/*',
    ';',
    'application/json;;',
    'application/json; charset=',
  ),
  headerText,
);

describe('HTTP edge under arbitrary input [pglite]', () => {
  let h: Harness;
  let all: string;
  let sendOnly: string;
  let verifyOnly: string;
  let owner: ClientCredentials;
  let v: RecordBody;
  before(async () => {
    h = await createHarness('pglite', { env: { AUTH_FAILURE_LIMIT: '1000', PHONE_COOLDOWN_SECONDS: '0', PHONE_LIMIT_COUNT: '1000' } });
    owner = await h.client(['otp:send', 'otp:verify']);
    all = await h.token(['otp:send', 'otp:verify'], owner);
    sendOnly = await h.token(['otp:send'], owner);
    verifyOnly = await h.token(['otp:verify'], owner);
    v = await createVerification(h, all);
  });
  after(() => h.close());

  /** The invariants of every response. */
  function checkAny(res: LightMyRequestResponse, context: string): void {
    assert.ok(res.statusCode < 500, `${context}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    assert.ok(res.headers['x-request-id'], `${context}: no x-request-id`);
    assertNoLeak(res.body);
  }

  function checkV1(res: LightMyRequestResponse, context: string): void {
    checkAny(res, context);
    const body: unknown = res.json();
    if (res.statusCode === 200) {
      const ok = body as { status: boolean; message: string; data: RecordBody };
      assert.equal(ok.status, true);
      assert.equal(typeof ok.message, 'string');
      assert.deepEqual(Object.keys(ok.data).sort(), recordKeys);
    } else {
      assertV1ErrorShape(body);
      if (res.statusCode === 401) assert.match(String(res.headers['www-authenticate']), /^Bearer/);
      if (res.statusCode === 429) assert.match(String(res.headers['retry-after']), /^\d+$/);
    }
  }

  function checkOAuth(res: LightMyRequestResponse, context: string): void {
    checkAny(res, context);
    const body = res.json() as Record<string, unknown>;
    if (res.statusCode === 200) {
      assert.equal(typeof body.access_token, 'string');
      assert.equal(body.token_type, 'Bearer');
    } else {
      assert.ok([400, 401, 429].includes(res.statusCode), `${context}: ${res.statusCode}`);
      assert.equal(typeof body.error, 'string', `${context}: ${res.body}`);
      assert.equal(typeof body.error_description, 'string', `${context}: ${res.body}`);
    }
  }

  it('POST /v1/otp/request: arbitrary field values', async () => {
    await fc.assert(
      fc.asyncProperty(createBody, fc.option(headerText), async (body, key) => {
        const res = await h.call('POST', '/v1/otp/request', sendOnly, body, key === null ? {} : { 'idempotency-key': key });
        checkV1(res, JSON.stringify(body));
        if (res.statusCode === 200) assert.equal(res.json().data.status, 'PENDING');
      }),
      params,
    );
  });

  it('POST /v1/otp/request and /v1/otp/verify: arbitrary JSON text and content types', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v1/otp/request', '/v1/otp/verify'),
        fc.oneof(jsonText, fc.string({ unit: 'binary', maxLength: 200 })),
        fc.option(contentType, { freq: 3 }),
        async (url, raw, type) => {
          const res = await h.app.inject({
            method: 'POST',
            url,
            headers: { authorization: `Bearer ${all}`, ...(type !== null && { 'content-type': type }) },
            payload: raw,
          });
          checkV1(res, `${url} ${String(type)} ${raw.slice(0, 100)}`);
        },
      ),
      params,
    );
  });

  it('POST /v1/otp/request: bodies around the 16 KiB limit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 16 * 1024 - 120, max: 16 * 1024 + 120 }), fc.constantFrom('reference', 'pad'), async (size, field) => {
        const prefix = `{"countryCode":"+234","phoneNumber":"08031234567","${field}":"`;
        const raw = `${prefix}${'x'.repeat(Math.max(0, size - prefix.length - 2))}"}`;
        const res = await h.call('POST', '/v1/otp/request', sendOnly, raw, { 'content-type': 'application/json' });
        checkV1(res, `size ${raw.length}`);
        if (Buffer.byteLength(raw) > 16 * 1024) assert.equal(res.statusCode, 413);
        else assert.notEqual(res.statusCode, 413);
      }),
      { ...params, numRuns: Math.min(numRuns, 60) },
    );
  });

  it('POST /v1/otp/verify: arbitrary ids and codes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ id: fc.oneof(fc.constant(v.id), fc.uuid(), anyValue), otp: fc.oneof(fc.stringMatching(/^\d{6}$/), anyValue) }, { requiredKeys: [] }),
        async (body) => {
          const res = await h.call('POST', '/v1/otp/verify', verifyOnly, body);
          checkV1(res, JSON.stringify(body));
          assert.ok([200, 400, 404, 409, 422].includes(res.statusCode), `${res.statusCode} ${res.body}`);
        },
      ),
      params,
    );
  });

  it('GET /v1/otp/{id}: arbitrary ids', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.uuid(), fc.string({ unit: 'binary', maxLength: 120 }), fc.constant(v.id)), async (id) => {
        const res = await h.call('GET', `/v1/otp/${encodeURIComponent(id)}`, all);
        checkV1(res, id);
        assert.ok([200, 404].includes(res.statusCode), `${res.statusCode} for ${id}`);
        if (res.statusCode === 200) assert.equal(id, v.id);
      }),
      params,
    );
  });

  it('every /v1 route: arbitrary Authorization headers', async () => {
    const mutate = (token: string, i: number, c: string) => {
      const at = i % token.length;
      return token.slice(0, at) + c + token.slice(at + 1);
    };
    const authorization = fc.oneof(
      fc.constant(undefined),
      headerText,
      headerText.map((t) => `Bearer ${t}`),
      headerText.map((t) => `Basic ${Buffer.from(t).toString('base64')}`),
      fc.tuple(fc.nat(), fc.constantFrom('A', 'b', '0', '-', '_', '.', '=')).map(([i, c]) => `Bearer ${mutate(all, i, c)}`),
      fc.constantFrom(`Bearer ${all}`, `Bearer ${sendOnly}`, `Bearer ${verifyOnly}`, `bearer ${all}`, `Bearer  ${all}`, `Bearer ${all}=`, `Bearer ${all}.x`),
    );
    const route = fc.constantFrom(
      { method: 'GET' as const, url: `/v1/otp/${v.id}`, body: undefined },
      { method: 'POST' as const, url: '/v1/otp/request', body: { countryCode: '+234', phoneNumber: '08031234567' } },
      { method: 'POST' as const, url: '/v1/otp/verify', body: { id: v.id, otp: '000000' } },
    );
    await fc.assert(
      fc.asyncProperty(route, authorization, async (r, auth) => {
        const res = await h.app.inject({
          method: r.method,
          url: r.url,
          headers: auth === undefined ? {} : { authorization: auth },
          ...(r.body !== undefined && { payload: r.body }),
        });
        checkV1(res, `${r.method} ${r.url} ${String(auth)}`);
      }),
      params,
    );
  });

  it('any method and path: never a 500, errors in the /v1 shape', async () => {
    const segment = fc.oneof(
      fc.constantFrom('v1', 'otp', 'request', 'verify', 'oauth', 'token', 'oauth2', '.well-known', 'healthz', v.id, '..', '.', '', '%', '%zz', '%E0%A4%A'),
      // Raw characters a client can put in a request line; a backslash makes the test client's own URL parser throw.
      fc.string({ unit: 'grapheme-ascii', maxLength: 12 }).map((s) => s.replace(/[?#\s\\]/g, '')),
      fc.string({ unit: 'binary', maxLength: 12 }).map(encodeURIComponent),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        fc.option(jsonText),
        async (method, segments, body) => {
          const url = `/${segments.join('/')}`;
          const res = await h.app.inject({
            method: method as 'GET',
            url,
            headers: { authorization: `Bearer ${all}`, ...(body !== null && { 'content-type': 'application/json' }) },
            ...(body !== null && method !== 'GET' && { payload: body }),
          });
          const context = `${method} ${url}`;
          if (method === 'POST' && /^\/oauth2?\/token$/.test(url)) checkOAuth(res, context);
          else if (res.statusCode >= 400) checkV1(res, context);
          else checkAny(res, context);
        },
      ),
      params,
    );
  });

  describe('token endpoints', () => {
    const names = fc.oneof(
      fc.constantFrom('grant_type', 'client_id', 'client_secret', 'scope', 'constructor', '__proto__', 'toString', 'hasOwnProperty'),
      fc.string({ maxLength: 8 }),
    );
    const values = (c: () => ClientCredentials) =>
      fc.oneof(
        fc.constantFrom('client_credentials', 'password', 'otp:send', 'otp:send otp:verify', 'admin', ''),
        fc.constant(null).map(() => c().clientId),
        fc.constant(null).map(() => c().clientSecret),
        fc.string({ unit: 'binary', maxLength: 60 }),
      );

    for (const url of ['/oauth/token', '/oauth2/token']) {
      it(`POST ${url}: arbitrary parameters, encodings and client authentication`, async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.tuple(names, values(() => owner)), { maxLength: 6 }),
            fc.constantFrom('form', 'json', 'raw'),
            fc.option(contentType),
            fc.option(fc.oneof(headerText, fc.tuple(values(() => owner), values(() => owner)).map(([id, s]) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(s)}`).toString('base64')}`))),
            fc.string({ unit: 'binary', maxLength: 100 }),
            async (fields, encoding, type, authorization, raw) => {
              let payload: string;
              let defaultType: string;
              if (encoding === 'form') {
                payload = new URLSearchParams(fields).toString();
                defaultType = 'application/x-www-form-urlencoded';
              } else if (encoding === 'json') {
                payload = JSON.stringify(Object.fromEntries(fields));
                defaultType = 'application/json';
              } else {
                payload = raw;
                defaultType = 'application/x-www-form-urlencoded';
              }
              const res = await h.app.inject({
                method: 'POST',
                url,
                remoteAddress: freshAddress(),
                headers: { 'content-type': type ?? defaultType, ...(authorization !== null && { authorization }) },
                payload,
              });
              checkOAuth(res, `${encoding} ${String(type)} ${payload.slice(0, 120)}`);
            },
          ),
          params,
        );
      });

      it(`POST ${url}: arbitrary JSON text`, async () => {
        await fc.assert(
          fc.asyncProperty(jsonText, async (raw) => {
            const res = await h.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: raw });
            checkOAuth(res, raw.slice(0, 120));
            assert.notEqual(res.statusCode, 200);
          }),
          params,
        );
      });
    }
  });
});
