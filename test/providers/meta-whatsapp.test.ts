import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import type { SendResult } from '../../src/channels/provider-port.js';
import { decideMetaAnswer } from '../../src/providers/whatsapp/meta-errors.js';
import { metaLanguage, metaUserAgent } from '../../src/providers/whatsapp/meta.js';
import { metaCloudApiSpec, metaOverlay } from '../support/meta-prism.js';
import { startPrism, type PrismMock } from '../support/prism.js';

const published = (): unknown => parse(fs.readFileSync(metaCloudApiSpec, 'utf8'), { maxAliasCount: -1 });

/** Every JSON path where two documents differ. */
function differences(a: unknown, b: unknown, at = ''): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  const leaf = (v: unknown) => typeof v !== 'object' || v === null || (Array.isArray(v) && v.every((e) => typeof e !== 'object'));
  if (leaf(a) || leaf(b) || typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return [at];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) => differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}/${k}`));
}

const template = {
  messaging_product: 'whatsapp',
  to: '2348012345678',
  type: 'template',
  template: {
    name: 'otp_code',
    language: { code: 'en_US' },
    components: [
      { type: 'body', parameters: [{ type: 'text', text: '123456' }] },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '123456' }] },
    ],
  },
};

describe("the overlay on Meta's description", () => {
  it('changes exactly the three rules it names, and nothing else', () => {
    const overlaid = metaOverlay(published()) as { components: { schemas: Record<string, { required?: string[] }> } };
    assert.deepEqual(overlaid.components.schemas.LanguageObject?.required, ['code']);
    assert.deepEqual(overlaid.components.schemas.BaseMessageProperties?.required, ['messaging_product', 'to', 'type']);
    assert.deepEqual(differences(published(), metaOverlay(published())).sort(), [
      '/components/schemas/BaseMessageProperties/required',
      '/components/schemas/ButtonComponent/allOf/1/properties/index/pattern',
      '/components/schemas/LanguageObject/required',
      '/components/schemas/TemplateComponent/properties/index/pattern',
    ]);
  });

  describe('without it, Prism refuses the contract\'s send for exactly those rules', () => {
    let prism: PrismMock;
    before(async () => {
      prism = await startPrism(metaCloudApiSpec);
    });
    after(() => prism.stop());

    it('is a 422 naming the index pattern, the language policy and recipient_type', async () => {
      const res = await fetch(`${prism.url}/v23.0/106540352242922/messages`, {
        method: 'POST',
        headers: { authorization: 'Bearer EAAGtoken0123456789', 'content-type': 'application/json', 'user-agent': metaUserAgent },
        body: JSON.stringify(template),
      });
      const text = await res.text();
      assert.equal(res.status, 422, text);
      for (const rule of [/index/, /policy/, /recipient_type/]) assert.match(text, rule);
    });
  });
});

describe('Meta answers as results', () => {
  const logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const answer = (status: number, body: unknown): SendResult =>
    decideMetaAnswer({ status, retryAfter: undefined, body: Buffer.from(JSON.stringify(body)) }, logger);
  const error = (code: number, extra: Record<string, unknown> = {}) => ({ error: { message: 'x', type: 'OAuthException', code, fbtrace_id: 'A', ...extra } });

  it('reads the wamid of an accepted message', () => {
    assert.deepEqual(answer(200, { messaging_product: 'whatsapp', messages: [{ id: 'wamid.ABC' }] }), { kind: 'accepted', messageId: 'wamid.ABC' });
    assert.equal(answer(200, { messages: [] }).kind, 'permanent');
  });

  it('splits error codes into permanent and transient as Meta lists them', () => {
    for (const code of [131026, 131021, 133010, 132001, 132015, 100, 368]) assert.equal(answer(400, error(code)).kind, 'permanent', String(code));
    for (const code of [130429, 131056, 131048, 131000, 133004, 4, 80007]) assert.equal(answer(400, error(code)).kind, 'transient', String(code));
    for (const code of [190, 0, 10]) assert.match(JSON.stringify(answer(401, error(code))), /permanent.*META_ACCESS_TOKEN/);
  });

  it('decides an unknown code by is_transient and the HTTP status; 5xx and 429 without a body are transient', () => {
    assert.equal(answer(400, error(999_999)).kind, 'permanent');
    assert.equal(answer(400, error(999_999, { is_transient: true })).kind, 'transient');
    assert.equal(answer(503, {}).kind, 'transient');
    assert.equal(answer(429, {}).kind, 'transient');
    assert.match(JSON.stringify(answer(403, {})), /META_ACCESS_TOKEN/);
  });
});

describe('a verification locale as Meta\'s language code', () => {
  it('maps en to en_US, pt-BR to pt_BR, and keeps a language Meta names alone', () => {
    assert.deepEqual([null, 'en', 'pt-BR', 'pt', 'fr', 'es-MX', 'en-GB'].map(metaLanguage), ['en_US', 'en_US', 'pt_BR', 'pt_BR', 'fr', 'es_MX', 'en_GB']);
  });
});
