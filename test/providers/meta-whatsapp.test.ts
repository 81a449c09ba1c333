import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import type { SendResult } from '../../src/channels/provider-port.js';
import { decideMetaAnswer } from '../../src/providers/whatsapp/meta-errors.js';
import { loadConfig } from '../../src/config.js';
import { metaLanguage, metaUserAgent, metaWhatsApp } from '../../src/providers/whatsapp/meta.js';
import { metaCloudApiSpec, metaOverlay } from '../support/meta-prism.js';
import { startPrism, type PrismMock } from '../support/prism.js';
import { assertModuleDeclares } from './support.js';

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

describe('meta settings', () => {
  const s = metaWhatsApp.settings;
  it('names, defaults and secrecy', () => {
    assertModuleDeclares(metaWhatsApp, { name: 'meta', channels: ['whatsapp'], callbacks: true });
    assert.equal(s.META_BASE_URL.default, 'https://graph.facebook.com');
    assert.equal(s.META_API_VERSION.default, 'v23.0');
    for (const secret of [s.META_ACCESS_TOKEN, s.META_APP_SECRET, s.META_WEBHOOK_VERIFY_TOKEN]) assert.equal(secret.secret, true);
    assert.equal(s.META_WABA_ID.required, false);
  });

  it('refuses what cannot work, and a start with meta names every missing setting', () => {
    assert.throws(() => s.META_PHONE_NUMBER_ID.parse('+15550001234'), /phone number id/);
    assert.throws(() => s.META_API_VERSION.parse('23'), /v23\.0/);
    assert.throws(() => s.WHATSAPP_TEMPLATE.parse('OTP Code'), /template name/);
    assert.throws(() => s.META_ACCESS_TOKEN.parse('short'), /too short/);
    assert.throws(
      () => loadConfig({ WHATSAPP_PROVIDER: 'meta', PUBLIC_BASE_URL: 'https://otp.example.org' }),
      /META_ACCESS_TOKEN: required by the meta provider[\s\S]*META_PHONE_NUMBER_ID[\s\S]*META_APP_SECRET[\s\S]*META_WEBHOOK_VERIFY_TOKEN[\s\S]*WHATSAPP_TEMPLATE/,
    );
    const complete = { WHATSAPP_PROVIDER: 'meta', META_ACCESS_TOKEN: 'EAAGtoken0123456789', META_PHONE_NUMBER_ID: '1065', META_APP_SECRET: 'x', META_WEBHOOK_VERIFY_TOKEN: 'y', WHATSAPP_TEMPLATE: 'otp_code' };
    assert.throws(() => loadConfig(complete), /PUBLIC_BASE_URL: required by meta/);
    assert.deepEqual(loadConfig({ ...complete, PUBLIC_BASE_URL: 'https://otp.example.org' }).providers.whatsapp.map((p) => p.module.name), ['meta']);
  });
});
