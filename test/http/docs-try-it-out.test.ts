import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * Issue 17: /docs "Try it out" pre-filled an Idempotency-Key example, so every later create with another body was a
 * 409 for 24 h, and its default body posted webhooks to example.com. What it pre-fills comes from /openapi.json.
 */
let h: Harness;
before(async () => {
  h = await createHarness('pglite');
});
after(() => h.close());

interface Operation {
  parameters?: { name: string; in: string; example?: unknown; examples?: unknown; schema?: { example?: unknown; examples?: unknown } }[];
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
}

it('pre-fills no Idempotency-Key, and a create body that sends nothing to anyone else', async () => {
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Operation>> };
  const create = doc.paths['/v1/otp/request']?.post;
  assert.ok(create);
  const key = create.parameters?.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
  assert.ok(key, 'the header is documented');
  assert.equal(key.example, undefined);
  assert.equal(key.examples, undefined);
  assert.equal(key.schema?.example, undefined);
  assert.equal(key.schema?.examples, undefined);
  // Swagger UI fills the body with the first of the media type's examples.
  const examples = create.requestBody?.content['application/json']?.examples ?? {};
  const first = Object.values(examples)[0]?.value;
  assert.ok(first && typeof first === 'object', 'a body to try');
  assert.ok(!('webhookUrl' in first), `the first example posts webhooks somewhere: ${JSON.stringify(first)}`);
  const res = await h.call('POST', '/v1/otp/request', await h.token(['otp:send']), first);
  assert.equal(res.statusCode, 200, res.body);
});
