import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startMetaPeer, type MetaPeer } from '../support/meta-prism.js';
import { runCommand } from '../support/command-line.js';

const wabaId = '102290129340398';
const accessToken = 'EAAGtestaccesstoken0123456789';

/**
 * Contract 13: `otp-service whatsapp template create|list` against Meta's own OpenAPI description in Prism (the
 * same peer as the sends): the requests validate, and Meta's answer is printed. The command runs in this process (test/support/command-line.ts).
 */
describe('otp-service whatsapp template', () => {
  let meta: MetaPeer;
  let env: Record<string, string>;
  before(async () => {
    meta = await startMetaPeer();
    env = {
      DATA_DIR: path.join(os.tmpdir(), 'otp-whatsapp-never-created'),
      META_ACCESS_TOKEN: accessToken,
      META_WABA_ID: wabaId,
      META_BASE_URL: meta.url,
      WHATSAPP_TEMPLATE: 'otp_code',
      OTP_TTL_SECONDS: '300',
    };
  });
  after(() => meta.stop());

  const templateRequests = () => meta.requests.filter((r) => r.path.startsWith(`/v23.0/${wabaId}/message_templates`));

  it('create asks for an AUTHENTICATION template with a COPY_CODE button and prints Meta\'s answer', async () => {
    const ran = await runCommand(['whatsapp', 'template', 'create'], env);
    assert.equal(ran.code, 0, ran.stderr);
    const request = templateRequests().at(-1);
    assert.ok(request);
    assert.equal(request.prismStatus, 200);
    assert.equal(request.headers.authorization, `Bearer ${accessToken}`);
    assert.deepEqual(JSON.parse(request.body), {
      name: 'otp_code',
      language: 'en_US',
      category: 'AUTHENTICATION',
      components: [
        { type: 'BODY', add_security_recommendation: true },
        { type: 'FOOTER', code_expiration_minutes: 5 },
        { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }] },
      ],
    });
    assert.match(ran.stdout, /"id"/);
    assert.doesNotMatch(ran.stdout + ran.stderr, new RegExp(accessToken));
  });

  it('create --language pt-BR --one-tap asks for a ONE_TAP button for that app, in pt_BR', async () => {
    const ran = await runCommand(['whatsapp', 'template', 'create', '--language', 'pt-BR', '--one-tap', 'com.example.app:K8a/AINcGX7', '--json'], env);
    assert.equal(ran.code, 0, ran.stderr);
    const body = JSON.parse(templateRequests().at(-1)?.body ?? '{}') as { language: string; components: { buttons?: unknown[] }[] };
    assert.equal(body.language, 'pt_BR');
    assert.deepEqual(body.components[2]?.buttons, [
      { type: 'OTP', otp_type: 'ONE_TAP', text: 'Copy code', autofill_text: 'Autofill', supported_apps: [{ package_name: 'com.example.app', signature_hash: 'K8a/AINcGX7' }] },
    ]);
    assert.ok(JSON.parse(ran.stdout), 'one JSON document');
  });

  it('list prints each template with its language, category and status', async () => {
    const ran = await runCommand(['whatsapp', 'template', 'list'], env);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(templateRequests().at(-1)?.prismStatus, 200);
    assert.match(ran.stdout, /^\S+ {2}\S+ {2}[A-Z_]+ {2}[A-Z_]+$/m);
  });

  it('names what is missing or wrong, and refuses a bad --one-tap', async () => {
    const missing = await runCommand(['whatsapp', 'template', 'list'], { DATA_DIR: env.DATA_DIR ?? '' });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /META_ACCESS_TOKEN: required[\s\S]*META_WABA_ID: required[\s\S]*WHATSAPP_TEMPLATE: required/);
    const bad = await runCommand(['whatsapp', 'template', 'create', '--one-tap', 'nope'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--one-tap must be PACKAGE:SIGNATURE_HASH/);
  });
});
