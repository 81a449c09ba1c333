import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { runAdminCommand } from '../../src/admin/commands.js';
import { formatMessage } from '../../src/cli/messages.js';
import { adminDeps } from '../../src/admin/deps.js';
import { createVerification, e164Of, eventually, expectV1Error, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { twilioSmsSettings } from '../support/provider-settings.js';

/** Contract 13: a WHATSAPP verification through the development `log` provider, as the inbox shows it. */
forEachDatabase('WHATSAPP through the log provider', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { WHATSAPP_SENDER_NUMBER: '+2349010000777' } });
  });
  after(() => h.close());

  it('is a WHATSAPP record whose code reaches the inbox as a WhatsApp message from the business number', async () => {
    const token = await h.token();
    const local = nextLocalNumber();
    const created = await createVerification(h, token, { phoneNumber: local, type: 'WHATSAPP' });
    assert.equal(created.type, 'WHATSAPP');
    assert.equal((created as unknown as { delivery: { channel: string } }).delivery.channel, 'WHATSAPP');
    assert.equal(created.pairedNumber, '09010000777');
    assert.match(String(created.otp), /^\d{6}$/);
    // The inbox holds the message as the provider takes it; SENT is recorded just after, so wait for both.
    await eventually(async () => (await h.services.inbox.latest(10, e164Of(local)))[0]?.state?.deliveryStatus === 'SENT');
    const [message] = await h.services.inbox.latest(10, e164Of(local));
    assert.ok(message);
    assert.equal(message.channel, 'whatsapp');
    assert.equal(message.from, '+2349010000777');
    assert.equal(message.text, `${String(created.otp)} is your verification code. For your security, do not share this code.\nThis code expires in 10 minutes.`);
    const line = JSON.parse(formatMessage(message, true)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(line), ['at', 'channel', 'to', 'from', 'text', 'verificationId', 'provider', 'testNumber']);
    assert.equal(line.channel, 'whatsapp');
    assert.match(formatMessage(message, false), /^\S+ {2}WHATSAPP to \+234\d+ from \+2349010000777: \d{6} is your verification code\. .* expires in 10 minutes\. {2}\[PENDING \(SENT\)\]/);
    const fetched = await h.call('GET', `/v1/otp/${created.id}`, token);
    const record = (fetched.json() as { data: { delivery: { status: string; provider: string } } }).data;
    assert.deepEqual([record.delivery.status, record.delivery.provider], ['SENT', 'log']);
    // A resend sends the same code again through the channel, after the cool-down.
    h.clock.advance(31_000);
    const resent = await h.call('POST', `/v1/otp/${created.id}/resend`, token);
    assert.equal(resent.statusCode, 200, resent.body);
    await eventually(async () => (await h.services.inbox.latest(10, e164Of(local))).length === 2);
    const again = await h.services.inbox.latest(10, e164Of(local));
    assert.deepEqual(again.map((m) => [m.channel, m.text]), [['whatsapp', message.text], ['whatsapp', message.text]]);
    const verified = await h.call('POST', '/v1/otp/verify', token, { id: created.id, otp: created.otp });
    assert.equal(verified.statusCode, 200, verified.body);
  });

  it('a test number gets its fixed code on WhatsApp, reaches no provider, and the inbox shows it as WhatsApp', async () => {
    const c = await h.client(['otp:send', 'otp:verify']);
    const token = await h.token(['otp:send', 'otp:verify'], c);
    const local = nextLocalNumber();
    const added = await runAdminCommand(adminDeps(h.services), { name: 'clients.test-numbers.add', id: c.clientId, number: e164Of(local), code: '135790' });
    assert.ok(added.ok);
    const v = await createVerification(h, token, { phoneNumber: local, type: 'WHATSAPP' });
    assert.equal(v.otp, '135790');
    const [shown] = await h.services.inbox.latest(1, e164Of(local));
    assert.deepEqual([shown?.channel, shown?.provider, shown?.from], ['whatsapp', 'test', '+2349010000777']);
    assert.match(shown?.text ?? '', /^135790 is your verification code/);
  });
});

describe('WHATSAPP_PROVIDER', () => {
  it('is log when developing with no provider named, off beside a real provider, refused as log in production', () => {
    assert.deepEqual(loadConfig({}).providers.whatsapp.map((p) => p.module.name), ['log']);
    assert.deepEqual(loadConfig(twilioSmsSettings).providers.whatsapp, []);
    assert.deepEqual(loadConfig({ ...twilioSmsSettings, WHATSAPP_PROVIDER: 'log' }).providers.whatsapp.map((p) => p.module.name), ['log']);
    assert.throws(() => loadConfig({ ...twilioSmsSettings, NODE_ENV: 'production', WHATSAPP_PROVIDER: 'log' }), /WHATSAPP_PROVIDER: log sends nothing/);
    assert.throws(() => loadConfig({ WHATSAPP_PROVIDER: 'smpp' }), /WHATSAPP_PROVIDER: unknown provider "smpp"; expected one of log/);
  });

  it('off: a WHATSAPP create is a 400 naming the setting', async () => {
    const h = await createHarness('pglite', { env: twilioSmsSettings });
    try {
      const token = await h.token();
      const res = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber(), type: 'WHATSAPP' });
      const body = expectV1Error(res, 400, 'VALIDATION_ERROR');
      assert.match(JSON.stringify(body.error.details), /WHATSAPP is not offered by this service: it has no WhatsApp provider \(WHATSAPP_PROVIDER\)/);
    } finally {
      await h.close();
    }
  });
});
