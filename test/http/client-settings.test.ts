import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { runAdminCommand, type AdminCommand, type AdminResult } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { createVerification, e164Of, expectV1Error, nextLocalNumber, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';
import { runCommand } from '../support/command-line.js';
import { TestClock } from '../support/clock.js';
import { embeddedDataDir } from '../support/databases.js';

/** Contract 9: a client's settings, managed by the operator commands and applied by create, send and answers. */
forEachDatabase('client settings', (kind) => {
  let h: Harness;
  let hooks: Receiver;
  before(async () => {
    hooks = await startReceiver();
    h = await createHarness(kind, { clock: new TestClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', OTP_TTL_SECONDS: '300' } });
  });
  after(async () => {
    await h.close();
    await hooks.close();
  });

  const admin = (command: AdminCommand): Promise<AdminResult> => runAdminCommand(adminDeps(h.services), command);
  const ok = async (command: AdminCommand): Promise<unknown> => {
    const r = await admin(command);
    assert.ok(r.ok, `${command.name}: ${r.ok ? '' : r.error}`);
    return r.value;
  };
  const refused = async (command: AdminCommand, pattern: RegExp): Promise<void> => {
    const r = await admin(command);
    assert.equal(r.ok, false, `${command.name} should be refused`);
    if (!r.ok) assert.match(r.error, pattern);
  };
  /** A fresh client with both scopes, and its token. */
  const fresh = async () => {
    const c = await h.client(['otp:send', 'otp:verify']);
    return { id: c.clientId, token: await h.token(['otp:send', 'otp:verify'], c) };
  };
  const smsOf = async (v: RecordBody) => {
    await h.services.sendWorker.idle();
    const [m] = await h.services.messages.forVerification(v.id);
    assert.ok(m, 'a message was stored');
    return m;
  };

  describe('texts', () => {
    it('sends the English default with the real lifetime, naming the app, with the Android hash and the WebOTP line last', async () => {
      const c = await fresh();
      await ok({ name: 'clients.update', id: c.id, change: { appName: 'Acme', webotpDomain: 'Login.Example.com', androidAppHash: 'FA+9qCX9VSu' } });
      const v = await createVerification(h, c.token);
      const m = await smsOf(v);
      assert.equal(m.body, `${v.otp} is your Acme verification code. It expires in 5 minutes. Do not share it.\nFA+9qCX9VSu\n@login.example.com #${v.otp}`);
    });

    it('uses the template of the locale asked for, then its language, then the default locale, then English', async () => {
      const c = await fresh();
      const saved = (await ok({ name: 'clients.templates.set', id: c.id, locale: 'fr', template: 'Votre code {app} : {code} ({minutes} min)' })) as { parts: number; encoding: string; sample: string };
      assert.deepEqual({ parts: saved.parts, encoding: saved.encoding }, { parts: 1, encoding: 'GSM-7' });
      await ok({ name: 'clients.templates.set', id: c.id, locale: 'pt-br', template: 'Seu código: {code}' });
      await ok({ name: 'clients.update', id: c.id, change: { appName: 'Acme', defaultLocale: 'pt-BR' } });
      const fr = await createVerification(h, c.token, { locale: 'fr-CA' });
      assert.equal((await smsOf(fr)).body, `Votre code Acme : ${fr.otp} (5 min)`);
      const none = await createVerification(h, c.token);
      assert.equal((await smsOf(none)).body, `Seu código: ${none.otp}`, 'the default locale');
      await ok({ name: 'clients.update', id: c.id, change: { defaultLocale: null } });
      const de = await createVerification(h, c.token, { locale: 'de' });
      assert.match((await smsOf(de)).body, /^\d{6} is your Acme verification code\./);
      assert.deepEqual(Object.keys((await ok({ name: 'clients.templates.list', id: c.id })) as object).sort(), ['fr', 'pt-BR']);
      await ok({ name: 'clients.templates.remove', id: c.id, locale: 'fr' });
      await refused({ name: 'clients.templates.remove', id: c.id, locale: 'fr' }, /no template for fr/);
    });

    it('refuses a template without {code}, with an unknown placeholder, or too long, and says why', async () => {
      const c = await fresh();
      await refused({ name: 'clients.templates.set', id: c.id, locale: 'fr', template: 'Bonjour' }, /must contain \{code\}/);
      await refused({ name: 'clients.templates.set', id: c.id, locale: 'fr', template: 'Code {code} pour {user}' }, /unknown placeholder \{user\}/);
      await refused({ name: 'clients.templates.set', id: c.id, locale: 'ja', template: `${'認証コード'.repeat(50)}{code}` }, /takes \d+ SMS parts \(UCS-2\)/);
      await refused({ name: 'clients.templates.set', id: c.id, locale: 'not a locale!', template: '{code}' }, /BCP 47/);
      const long = (await ok({ name: 'clients.templates.set', id: c.id, locale: 'en', template: `${'x'.repeat(200)} {code}` })) as { parts: number };
      assert.equal(long.parts, 2, 'a long GSM text says how many parts it takes');
    });

    it('refuses bidirectional controls and other control characters in templates and app names, naming the character', async () => {
      const c = await fresh();
      const bidi = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'];
      for (const ch of [...bidi, '\u2028', '\u2029', '\u0085', '\u009b', '\u0007', '\r', '\t']) {
        const hex = `U\\+${ch.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}`;
        await refused(
          { name: 'clients.templates.set', id: c.id, locale: 'fr', template: `Code ${ch}{code}` },
          new RegExp(`must not contain control or bidirectional formatting characters: it holds ${hex} `),
        );
        await refused({ name: 'clients.update', id: c.id, change: { appName: `Acme${ch}` } }, new RegExp(`--app-name.*${hex}`));
      }
      await refused({ name: 'clients.update', id: c.id, change: { appName: 'Acme\nBank' } }, /--app-name.*U\+000A/);
      const shown = (await ok({ name: 'clients.show', id: c.id })) as { settings: { appName: string | null; templates: Record<string, string> } };
      assert.deepEqual({ appName: shown.settings.appName, templates: shown.settings.templates }, { appName: null, templates: {} }, 'nothing was saved');
      // What real texts need stays allowed: line feeds in a template, right-to-left scripts, joiners.
      await ok({ name: 'clients.templates.set', id: c.id, locale: 'ar', template: 'رمز التحقق الخاص بك هو {code}\nلا تشاركه' });
      await ok({ name: 'clients.templates.set', id: c.id, locale: 'fa', template: 'کد شما: {code} می\u200cباشد' });
      await ok({ name: 'clients.update', id: c.id, change: { appName: 'متجر Acme' } });
    });

    it('rejects create with a malformed locale (400 VALIDATION_ERROR naming locale)', async () => {
      const c = await fresh();
      const err = expectV1Error(await h.call('POST', '/v1/otp/request', c.token, { countryCode: '+234', phoneNumber: nextLocalNumber(), locale: '12-!!' }), 400, 'VALIDATION_ERROR');
      assert.deepEqual(err.error.details?.map((d) => d.field), ['locale']);
    });
  });

  describe('answers and webhooks', () => {
    it('withholds the code from every answer and webhook once --reveal-code false, and the code still verifies', async () => {
      const c = await fresh();
      await ok({ name: 'clients.update', id: c.id, change: { revealCode: false, defaultWebhookUrl: `${hooks.url}/default` } });
      const v = await createVerification(h, c.token);
      assert.equal(v.otp, null);
      assert.equal((await h.call('GET', `/v1/otp/${v.id}`, c.token)).json().data.otp, null);
      const wrong = expectV1Error(await h.call('POST', '/v1/otp/verify', c.token, { id: v.id, otp: '000000' }), 422, 'OTP_MISMATCH');
      assert.equal(wrong.data?.otp, null);
      const code = /^(\d{6})/.exec((await smsOf(v)).body)?.[1];
      assert.ok(code);
      const right = await h.call('POST', '/v1/otp/verify', c.token, { id: v.id, otp: code });
      assert.equal(right.statusCode, 200);
      assert.equal(right.json().data.otp, null);
      await h.services.webhookWorker.idle();
      const hook = hooks.requests.find((r) => r.body.includes(v.id));
      assert.ok(hook, 'the default webhook got the event');
      assert.equal(hook.url, '/hooks/default');
      assert.equal((JSON.parse(hook.body) as { data: { otp: unknown } }).data.otp, null);
    });

    it('uses the default webhook only when a create names none', async () => {
      const c = await fresh();
      await ok({ name: 'clients.update', id: c.id, change: { defaultWebhookUrl: 'https://hooks.example.test/default' } });
      assert.equal((await createVerification(h, c.token)).webhookUrl, 'https://hooks.example.test/default');
      assert.equal((await createVerification(h, c.token, { webhookUrl: 'https://hooks.example.test/mine' })).webhookUrl, 'https://hooks.example.test/mine');
      await ok({ name: 'clients.update', id: c.id, change: { defaultWebhookUrl: null } });
      assert.equal((await createVerification(h, c.token)).webhookUrl, null);
    });
  });

  describe('allowed countries', () => {
    it('refuses numbers of other countries with 403 NUMBER_NOT_ALLOWED, sending and counting nothing', async () => {
      const c = await fresh();
      await ok({ name: 'clients.update', id: c.id, change: { allowedCountries: ['gh', 'NG'] } });
      assert.equal((await h.call('POST', '/v1/otp/request', c.token, { countryCode: '+234', phoneNumber: nextLocalNumber() })).statusCode, 200);
      const res = await h.call('POST', '/v1/otp/request', c.token, { countryCode: '+44', phoneNumber: '07400123456' });
      const err = expectV1Error(res, 403, 'NUMBER_NOT_ALLOWED');
      assert.match(err.error.details?.[0]?.issue ?? '', /GB .*GH, NG/);
      await ok({ name: 'clients.update', id: c.id, change: { allowedCountries: null } });
      assert.equal((await h.call('POST', '/v1/otp/request', c.token, { countryCode: '+44', phoneNumber: '07400123457' })).statusCode, 200);
    });
  });

  describe('test numbers', () => {
    it('gives a test number its fixed code, reaches no provider, counts toward no limit, and verifies', async () => {
      const c = await fresh();
      const local = nextLocalNumber();
      await ok({ name: 'clients.test-numbers.add', id: c.id, number: e164Of(local), code: '123456' });
      assert.deepEqual(await ok({ name: 'clients.test-numbers.list', id: c.id }), { [e164Of(local)]: '123456' });
      const made: RecordBody[] = [];
      for (let i = 0; i < 8; i++) made.push(await createVerification(h, c.token, { phoneNumber: local }));
      const [v] = made;
      assert.ok(v);
      assert.equal(v.otp, '123456');
      const record = (await h.call('GET', `/v1/otp/${v.id}`, c.token)).json().data as { delivery: { provider: string; status: string } };
      assert.deepEqual({ provider: record.delivery.provider, status: record.delivery.status }, { provider: 'test', status: 'DELIVERED' });
      const jobs = await h.services.db.db.selectFrom('send_jobs').select('verification_id').where('verification_id', 'in', made.map((m) => m.id)).execute();
      assert.deepEqual(jobs, [], 'no send job: no provider is called');
      assert.match((await smsOf(v)).body, /^123456 is your verification code/, 'the inbox still shows it');
      const [shown] = await h.services.inbox.latest(1, e164Of(local));
      assert.deepEqual({ testNumber: shown?.testNumber, provider: shown?.provider, code: shown?.code }, { testNumber: true, provider: 'test', code: '123456' });
      assert.equal((await h.call('POST', '/v1/otp/verify', c.token, { id: v.id, otp: '123456' })).statusCode, 200);
      await ok({ name: 'clients.test-numbers.remove', id: c.id, number: e164Of(local) });
      await refused({ name: 'clients.test-numbers.remove', id: c.id, number: e164Of(local) }, /no such test number/);
      await refused({ name: 'clients.test-numbers.add', id: c.id, number: '12345', code: '123456' }, /valid phone number/);
      await refused({ name: 'clients.test-numbers.add', id: c.id, number: e164Of(local), code: '12' }, /--code must be 4 to 10 digits/);
    });

    it('resends to a test number after the cool-down like any resend: OTP resent, counted, in the inbox, through no provider', async () => {
      const c = await fresh();
      const local = nextLocalNumber();
      await ok({ name: 'clients.test-numbers.add', id: c.id, number: e164Of(local), code: '246810' });
      const v = await createVerification(h, c.token, { phoneNumber: local });
      h.clock.advance(31_000);
      const res = await h.call('POST', `/v1/otp/${v.id}/resend`, c.token);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { message: string; data: RecordBody & { delivery: { provider: string; status: string; sends: number } } };
      assert.equal(body.message, 'OTP resent');
      const { provider, status, sends } = body.data.delivery;
      assert.deepEqual({ otp: body.data.otp, state: body.data.status, provider, status, sends }, { otp: '246810', state: 'PENDING', provider: 'test', status: 'DELIVERED', sends: 2 });
      const jobs = await h.services.db.db.selectFrom('send_jobs').select('verification_id').where('verification_id', '=', v.id).execute();
      assert.deepEqual(jobs, [], 'still no send job: no provider is called');
      const shown = await h.services.messages.forVerification(v.id);
      assert.deepEqual(shown.map((m) => m.body.slice(0, 6)), ['246810', '246810'], 'the inbox shows both sends');
      assert.equal((await h.call('POST', '/v1/otp/verify', c.token, { id: v.id, otp: '246810' })).statusCode, 200);
    });
  });

  describe('test numbers called (DROPPED_CALL)', () => {
    it("shows a caller id that ends in the test number's fixed code, of 4 digits or more, and verifies with either", async () => {
      const c = await fresh();
      for (const code of ['4321', '123456', '9876543210']) {
        const local = nextLocalNumber();
        await ok({ name: 'clients.test-numbers.add', id: c.id, number: e164Of(local), code });
        const v = await createVerification(h, c.token, { phoneNumber: local, type: 'DROPPED_CALL' });
        assert.equal(v.otp, code);
        assert.ok(v.pairedNumber.endsWith(code), `pairedNumber ${v.pairedNumber} ends in the code ${code}`);
        const [call] = await h.services.messages.forVerification(v.id);
        assert.ok(call?.sender.endsWith(code), `the inbox's caller id ${call?.sender} ends in the code ${code}`);
        assert.equal((await h.call('POST', '/v1/otp/verify', c.token, { id: v.id, otp: v.pairedNumber })).statusCode, 200, 'the whole caller id verifies');
      }
    });
  });

  describe('operator commands', () => {
    it('checks every option of update and names the one at fault', async () => {
      const c = await fresh();
      await refused({ name: 'clients.update', id: c.id, change: { defaultWebhookUrl: 'ftp://x.example' } }, /--default-webhook must use http or https/);
      await refused({ name: 'clients.update', id: c.id, change: { appName: 'a{b}' } }, /--app-name/);
      await refused({ name: 'clients.update', id: c.id, change: { webotpDomain: 'https://example.com' } }, /--webotp-domain/);
      await refused({ name: 'clients.update', id: c.id, change: { androidAppHash: 'short' } }, /--android-app-hash/);
      await refused({ name: 'clients.update', id: c.id, change: { allowedCountries: ['NGA'] } }, /--allowed-countries .*NGA/);
      await refused({ name: 'clients.update', id: c.id, change: { fallback: ['SEND_SMS', 'SEND_SMS'] } }, /--fallback takes at most 2/);
      await refused({ name: 'clients.update', id: c.id, change: { fallbackAfterSeconds: 0 } }, /--fallback-after/);
      await refused({ name: 'clients.update', id: '00000000-0000-4000-8000-000000000000', change: { revealCode: true } }, /no client/);
      const shown = (await ok({ name: 'clients.show', id: c.id })) as { clientId: string; settings: { revealCode: boolean } };
      assert.equal(shown.clientId, c.id);
      assert.equal(shown.settings.revealCode, true, 'nothing was saved by the refused changes');
      assert.ok(!JSON.stringify(shown).includes('secret'), 'show prints no secret');
    });

    it('takes the CLI forms of the contract: create, update, templates set, test-numbers add, show --json', async () => {
      const dataDir = kind === 'pglite' ? embeddedDataDir('otp-settings-cli-') : null;
      // Clients made here withhold their codes unless told otherwise, as NODE_ENV=production's do.
      const env: Record<string, string> = { LOG_LEVEL: 'silent', REVEAL_CODES_DEFAULT: 'false', ...(dataDir ? { DATA_DIR: dataDir } : { DATABASE_URL: String(h.config.DATABASE_URL) }) };
      const cli = async (...args: string[]) => {
        const ran = await runCommand(args, env);
        assert.equal(ran.code, 0, `otp-service ${args.join(' ')}: ${ran.stderr}`);
        return ran.stdout;
      };
      try {
        const created = JSON.parse(await cli('clients', 'create', '--name', 'cli', '--scopes', 'otp:send', '--json')) as { clientId: string; revealCode: boolean };
        assert.equal(created.revealCode, false, 'REVEAL_CODES_DEFAULT=false: a new client withholds its codes');
        const revealing = JSON.parse(await cli('clients', 'create', '--name', 'shows', '--scopes', 'otp:send', '--reveal-code', 'true', '--json')) as { clientId: string; revealCode: boolean };
        assert.equal(revealing.revealCode, true);
        const revealingShown = JSON.parse(await cli('clients', 'show', revealing.clientId, '--json')) as { settings: { revealCode: boolean } };
        assert.equal(revealingShown.settings.revealCode, true, '--reveal-code true on create is stored with the client');
        const id = created.clientId;
        assert.match(await cli('clients', 'update', id, '--reveal-code', 'false', '--allowed-countries', 'ng,GH', '--app-name', 'Acme', '--default-locale', 'fr', '--fallback', 'send_sms', '--fallback-after', '45'), /saved/);
        assert.match(await cli('clients', 'templates', 'set', id, '--locale', 'fr', 'Votre code {app} : {code}'), /saved the fr template: GSM-7, 1 SMS part at most\. A user reads:\n\nVotre code Acme : 9999/);
        await cli('clients', 'test-numbers', 'add', id, '+2348000000001', '--code', '123456');
        assert.match(
          await cli('clients', 'templates', 'set', id, '--channel', 'voice', '--locale', 'fr', 'Votre code {app} est {code}.'),
          /saved the fr voice template\. A call says, VOICE_REPEAT times:\n\nVotre code Acme est 9(, 9){3,}\./,
        );
        const overridden = await runCommand(['clients', 'templates', 'set', id, '--locale', 'en', 'Your code: {code}\u202e'], env);
        assert.equal(overridden.code, 1, overridden.stderr);
        assert.match(overridden.stderr, /must not contain control or bidirectional formatting characters: it holds U\+202E \(right-to-left override\)/);
        const shown = JSON.parse(await cli('clients', 'show', id, '--json')) as { settings: Record<string, unknown> };
        assert.deepEqual(
          { ...shown.settings },
          {
            appName: 'Acme',
            webotpDomain: null,
            androidAppHash: null,
            defaultWebhookUrl: null,
            revealCode: false,
            allowedCountries: ['GH', 'NG'],
            defaultLocale: 'fr',
            templates: { fr: 'Votre code {app} : {code}' },
            voiceTemplates: { fr: 'Votre code {app} est {code}.' },
            testNumbers: { '+2348000000001': '123456' },
            fallback: ['SEND_SMS'],
            fallbackAfterSeconds: 45,
            captcha: null,
            budget: { daily: null, monthly: null },
            decision: null,
          },
        );
        // Budgets: set in COST_CURRENCY, shown with what is spent today and this month; a malformed amount is refused.
        await cli('clients', 'update', id, '--daily-spend-limit', '25.00', '--monthly-spend-limit', '500');
        const today = new Date().toISOString().slice(0, 10);
        assert.match(
          await cli('clients', 'show', id),
          new RegExp(`\\n  budget:\\n    daily: 25\\n    monthly: 500\\n  decision: none\\nspend \\(COST_CURRENCY\\):\\n  today \\(from ${today}\\): 0 spent of 25\\n  this month \\(from ${today.slice(0, 8)}01\\): 0 spent of 500\\n$`),
        );
        // The decision webhook: on with its URL, its time-out and default changed alone, off with none.
        await cli('clients', 'update', id, '--decision-url', 'https://app.example.com/otp/decide', '--decision-default', 'deny');
        await cli('clients', 'update', id, '--decision-timeout-ms', '500');
        assert.match(await cli('clients', 'show', id), /\n  decision:\n    url: https:\/\/app\.example\.com\/otp\/decide\n    timeoutMs: 500\n    fallback: deny\n/);
        const slow = await runCommand(['clients', 'update', id, '--decision-timeout-ms', '9000'], env);
        assert.equal(slow.code, 1);
        assert.match(slow.stderr, /--decision-timeout-ms must be whole milliseconds from 50 to 5000/);
        assert.equal((await runCommand(['clients', 'update', id, '--decision-timeout-ms', 'soon'], env)).code, 2);
        await cli('clients', 'update', id, '--decision-url', 'none');
        const comma = await runCommand(['clients', 'update', id, '--daily-spend-limit', '25,00'], env);
        assert.equal(comma.code, 1, comma.stderr);
        assert.match(comma.stderr, /--daily-spend-limit must be an amount in COST_CURRENCY such as 25\.00 \(or none\)/);
        await cli('clients', 'update', id, '--daily-spend-limit', 'none', '--monthly-spend-limit', 'none');
        assert.doesNotMatch(await cli('clients', 'show', id), /spend \(COST_CURRENCY\)/);
        const refusedFallback = await runCommand(['clients', 'update', id, '--fallback', 'DROPPED_CALL'], env);
        assert.equal(refusedFallback.code, 1, refusedFallback.stderr);
        assert.match(refusedFallback.stderr, /--fallback takes request types from SEND_SMS.*not DROPPED_CALL/);
        const bad = await runCommand(['clients', 'update', id, '--reveal-code', 'maybe'], env);
        assert.equal(bad.code, 2);
        assert.match(bad.stderr, /--reveal-code takes true or false/);
      } finally {
        if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
});
