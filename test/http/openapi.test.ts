import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { OpenAPIV3_1 } from 'openapi-types';
import { errorCatalogue, type ErrorCode } from '../../src/domain/error-catalogue.js';
import { webhookPayload, type EventKind } from '../../src/domain/events.js';
import { knownScopes, type Scope } from '../../src/domain/scopes.js';
import { exampleVerification } from '../../src/http/api-examples.js';
import { docsContentSecurityPolicy } from '../../src/http/api-reference.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * Contract 12: GET /openapi.json is a valid OpenAPI 3.1 document of every route the app serves, with the
 * scope of each operation, every error code a route answers, and examples that match their schemas; the
 * scopes and statuses it states are checked against what the app answers.
 */

type Document = OpenAPIV3_1.Document;
type Operation = OpenAPIV3_1.OperationObject;

const methods = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

/** Routes the app serves that the document leaves out on purpose. */
const undocumented = [
  // The renderer's own page, assets and copies of this document.
  /^\/docs(\/|$)/,
  // The same operation as /callbacks/{provider}, with more path after it (not expressible as a parameter).
  /^\/callbacks\/:provider\/\*$/,
  // The development inbox: a page and its event stream for developers, not part of the API (on only with `log`).
  /^\/dev\/inbox(\/|$)/,
];

/**
 * Every method and path the app serves (HEAD left out: Fastify adds it to every GET), read from
 * printRoutes' tree, where each line carries the part of the path after its parent's.
 */
function servedRoutes(tree: string): Set<string> {
  const routes = new Set<string>();
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    // A wildcard after a parameter is printed without the slash before it (`:provider` then `*`).
    const part = match[2] ?? '';
    stack.push(part.startsWith('*') && !stack.join('').endsWith('/') ? `/${part}` : part);
    const path = stack.join('');
    for (const method of (match[3] ?? '').split(', ').filter((m) => m && m !== 'HEAD')) routes.add(`${method} ${path}`);
  }
  return routes;
}

function operations(doc: Document): { method: string; path: string; op: Operation }[] {
  const found: { method: string; path: string; op: Operation }[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of methods) {
      const op = item?.[method];
      if (op) found.push({ method: method.toUpperCase(), path, op });
    }
  }
  return found;
}

function isReference(value: object): value is OpenAPIV3_1.ReferenceObject {
  return '$ref' in value;
}

/** The codes a documented error response names, from its schema's `error.code` enum. */
function documentedCodes(response: OpenAPIV3_1.ResponseObject | OpenAPIV3_1.ReferenceObject): string[] {
  if (isReference(response)) return [];
  const schema = response.content?.['application/json']?.schema;
  if (!schema || isReference(schema)) return [];
  const error = schema.properties?.error;
  if (!error || isReference(error)) return [];
  const code = error.properties?.code;
  if (!code || isReference(code)) return [];
  return (code.enum ?? []).filter((c): c is string => typeof c === 'string');
}

/** Whether the document says an operation can answer this status (exactly, or as a range like 4XX). */
function documentsStatus(op: Operation, status: number): boolean {
  const responses = op.responses ?? {};
  return String(status) in responses || `${String(status)[0]}XX` in responses || 'default' in responses;
}

forEachDatabase('openapi document', (kind) => {
  let h: Harness;
  let doc: Document;
  before(async () => {
    h = await createHarness(kind);
    const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const validator = new Validator();
    const result = await validator.validate(res.json());
    assert.deepEqual(result, { valid: true }, 'the document is not valid OpenAPI');
    assert.equal(validator.version, '3.1');
    // Checked just above by the OpenAPI 3.1 schema.
    doc = validator.specification as Document;
  });
  after(() => h.close());

  it('is a valid OpenAPI 3.1 document, served without a token', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'otp-service');
  });

  it('documents every route the app serves, and nothing it does not', () => {
    const served = [...servedRoutes(h.app.printRoutes({ commonPrefix: false }))].filter(
      (route) => !undocumented.some((pattern) => pattern.test(route.slice(route.indexOf(' ') + 1))),
    );
    const documented = operations(doc).map(({ method, path }) => `${method} ${path.replace(/\{([^}]+)\}/g, ':$1')}`);
    for (const route of served) {
      const [method = '', url = ''] = route.split(' ');
      assert.ok(h.app.hasRoute({ method, url }), `route list misread: ${route}`);
    }
    assert.ok(served.includes('POST /v1/otp/request') && served.includes('GET /healthz'), `route list not read: ${served.join(', ')}`);
    assert.deepEqual([...documented].sort(), [...served].sort());
  });

  it('gives each operation a summary, a description and a tag, and each tag a description', () => {
    const tags = new Set((doc.tags ?? []).map((t) => t.name));
    for (const tag of doc.tags ?? []) assert.ok(tag.description, `tag ${tag.name} has no description`);
    for (const { method, path, op } of operations(doc)) {
      assert.ok(op.summary && op.description, `${method} ${path} has no summary or description`);
      assert.ok(op.tags?.length && op.tags.every((t) => tags.has(t)), `${method} ${path} has no declared tag`);
    }
  });

  it('names the scopes of every /v1 operation, and no security on the public ones', () => {
    const scheme = doc.components?.securitySchemes?.oauth2;
    assert.ok(scheme && !isReference(scheme) && scheme.type === 'oauth2');
    assert.deepEqual(Object.keys(scheme.flows.clientCredentials?.scopes ?? {}).sort(), [...knownScopes].sort());
    for (const { method, path, op } of operations(doc)) {
      assert.ok(Array.isArray(op.security), `${method} ${path} does not say whether it needs a token`);
      const scopes = op.security.flatMap((requirement) => requirement.oauth2 ?? []);
      if (path.startsWith('/v1/')) {
        assert.ok(scopes.length > 0, `${method} ${path} names no scope`);
        assert.ok(scopes.every((s) => (knownScopes as readonly string[]).includes(s)), `${method} ${path}: ${scopes.join(' ')}`);
        assert.match(op.description ?? '', /Scope: /);
        for (const status of [401, 403, 429, 500, 503]) assert.ok(String(status) in (op.responses ?? {}), `${method} ${path} lacks ${status}`);
      } else if (path.startsWith('/one-time-password-sms/')) {
        // CAMARA's surface (contract 15): bearer tokens with its own scope.
        assert.deepEqual(scopes, ['one-time-password-sms:send-validate'], `${method} ${path}`);
      } else if (path.startsWith('/v2/')) {
        // The Twilio-shaped surface (contract 15) authenticates as Twilio does: HTTP Basic.
        assert.deepEqual(op.security, [{ twilioBasic: [] }], `${method} ${path} names Twilio's Basic scheme`);
      } else {
        assert.deepEqual(op.security, [], `${method} ${path} is public`);
      }
    }
  });

  it('lists every code of the error catalogue under its HTTP status, on some operation', () => {
    const seen = new Map<string, Set<string>>();
    for (const { op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        for (const code of documentedCodes(response)) seen.set(code, (seen.get(code) ?? new Set()).add(status));
      }
    }
    for (const [code, { status }] of Object.entries(errorCatalogue)) {
      assert.ok(seen.get(code)?.has(String(status)), `${code} (${status}) is documented nowhere`);
    }
    for (const code of seen.keys()) assert.ok(code in errorCatalogue, `${code} is not in the catalogue`);
  });

  it('has examples that match their own schemas, an example of each documented error code', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    let checked = 0;
    const check = (where: string, media: OpenAPIV3_1.MediaTypeObject) => {
      if (!media.schema) return;
      const validate = ajv.compile({ ...media.schema, components: doc.components });
      const values = [
        ...(media.example === undefined ? [] : [media.example]),
        ...Object.values(media.examples ?? {}).map((e) => (isReference(e) ? undefined : e.value)),
      ];
      for (const value of values) {
        checked += 1;
        assert.ok(validate(value), `${where}: ${JSON.stringify(validate.errors)}`);
      }
    };
    for (const { method, path, op } of operations(doc)) {
      const body = op.requestBody;
      if (body && !isReference(body)) {
        for (const [type, media] of Object.entries(body.content)) check(`${method} ${path} ${type} body`, media);
      }
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (isReference(response)) continue;
        for (const [type, media] of Object.entries(response.content ?? {})) check(`${method} ${path} ${status} ${type}`, media);
        // A range (4XX, 5XX) stands for any other status: its schema names every code, its examples none.
        if (status.endsWith('XX')) continue;
        const examples = Object.values(response.content?.['application/json']?.examples ?? {});
        const exampleCodes = examples.map((e) => (isReference(e) ? undefined : e.value?.error?.code));
        for (const code of documentedCodes(response)) {
          assert.ok(exampleCodes.includes(code), `${method} ${path} ${status}: no example of ${code}`);
        }
      }
    }
    assert.ok(checked > 40, `only ${checked} examples`);
  });

  it('documents the webhook body exactly as the service builds it', () => {
    const schema = doc.components?.schemas?.WebhookEvent;
    assert.ok(schema);
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const kinds: Record<EventKind, Partial<typeof exampleVerification>> = {
      'action.otp.success': { status: 'SUCCESS' },
      'action.otp.failed': { status: 'FAILED', failureReason: 'MAX_ATTEMPTS', reference: null },
      'action.otp.expired': { status: 'EXPIRED', type: 'DROPPED_CALL' },
    };
    for (const [event, change] of Object.entries(kinds) as [EventKind, Partial<typeof exampleVerification>][]) {
      const payload = webhookPayload(event, { ...exampleVerification, ...change });
      assert.ok(validate(payload), `${event}: ${JSON.stringify(validate.errors)}`);
      assert.ok(!validate({ ...payload, data: { ...payload.data, extra: 1 } }), 'the schema must list the fields exactly');
    }
  });

  it('answers as documented: no token, a token with just the scope named, a token with every other scope', async () => {
    const clients = new Map<string, string>();
    const tokenFor = async (scopes: readonly Scope[]) => {
      const key = [...scopes].sort().join(' ');
      const cached = clients.get(key);
      if (cached) return cached;
      const token = await h.token(scopes);
      clients.set(key, token);
      return token;
    };
    let secured = 0;
    for (const { method, path, op } of operations(doc)) {
      if (method !== 'GET' && method !== 'POST') continue;
      const url = path.replace('{id}', randomUUID()).replace('{provider}', 'log');
      const scopes = (op.security ?? []).flatMap((requirement) => requirement.oauth2 ?? []).filter((s): s is Scope => (knownScopes as readonly string[]).includes(s));
      const anonymous = await h.call(method, url, null, method === 'POST' ? {} : undefined);
      assert.ok(documentsStatus(op, anonymous.statusCode), `${method} ${path} answered ${anonymous.statusCode}, not documented`);
      if (path.startsWith('/one-time-password-sms/')) {
        assert.equal(anonymous.statusCode, 401, `${method} ${path} without a token`);
        assert.equal(anonymous.json().code, 'UNAUTHENTICATED', "CAMARA's error shape and code");
        continue;
      }
      if ((op.security ?? []).some((requirement) => 'twilioBasic' in requirement)) {
        assert.equal(anonymous.statusCode, 401, `${method} ${path} without credentials`);
        assert.equal(anonymous.json().code, 20003, 'Twilio\'s error shape and code');
        continue;
      }
      if (scopes.length === 0) {
        assert.notEqual(anonymous.statusCode, 401, `${method} ${path} is documented as public`);
        continue;
      }
      secured += 1;
      assert.equal(anonymous.statusCode, 401, `${method} ${path} without a token`);
      assert.equal(anonymous.json().error.code, 'UNAUTHORIZED');
      for (const scope of scopes) {
        const res = await h.call(method, url, await tokenFor([scope]), method === 'POST' ? {} : undefined);
        assert.ok(![401, 403].includes(res.statusCode), `${method} ${path} with ${scope}: ${res.statusCode} ${res.body}`);
        assert.ok(documentsStatus(op, res.statusCode), `${method} ${path} answered ${res.statusCode}, not documented`);
      }
      const others = knownScopes.filter((s) => !scopes.includes(s));
      const refused = await h.call(method, url, await tokenFor(others), method === 'POST' ? {} : undefined);
      assert.equal(refused.statusCode, 403, `${method} ${path} with ${others.join(' ')}`);
      assert.equal(refused.json().error.code, 'INSUFFICIENT_SCOPE' satisfies ErrorCode);
    }
    assert.ok(secured >= 4, `only ${secured} secured operations`);
  });

  it('serves the rendered reference at /docs without a token, under a Content-Security-Policy', async () => {
    const page = await h.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.equal(page.headers['content-security-policy'], docsContentSecurityPolicy);
    assert.doesNotMatch(page.body, /<script>|https?:\/\//, 'the page loads nothing inline and nothing from elsewhere');
    // The API's own answers are not under the page's policy.
    assert.equal((await h.app.inject({ method: 'GET', url: '/healthz' })).headers['content-security-policy'], undefined);
  });
});
