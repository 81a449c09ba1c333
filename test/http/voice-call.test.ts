import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { runAdminCommand, type AdminCommand } from '../../src/admin/commands.js';
import { formatMessage } from '../../src/cli/messages.js';
import { adminDeps } from '../../src/admin/deps.js';
import { createVerification, e164Of } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/** Contract 13: a VOICE_CALL through the `log` provider, as the record, the inbox and `otp-service messages` show it. */
forEachDatabase('a voice call through log', (kind) => {
  let h: Harness;
  const caller = '+2349010000555';
  before(async () => {
    h = await createHarness(kind, { env: { VOICE_CALLER_NUMBER: caller, VOICE_REPEAT: '2' }, queuePath: true });
  });
  after(() => h.close());

  it('is a VOICE_CALL record on channel VOICE from VOICE_CALLER_NUMBER, whose call reads the digits one by one, VOICE_REPEAT times', async () => {
    const token = await h.token(['otp:send', 'otp:verify']);
    const v = await createVerification(h, token, { type: 'VOICE_CALL' });
    assert.equal(v.type, 'VOICE_CALL');
    assert.match(v.otp, new RegExp(`^\\d{${h.config.OTP_LENGTH}}$`));
    assert.equal(e164Of(v.pairedNumber), caller, 'pairedNumber is the number the call comes from');
    const record = (await h.call('GET', `/v1/otp/${v.id}`, token)).json<{ data: { delivery: { channel: string } } }>();
    assert.equal(record.data.delivery.channel, 'VOICE');

    await h.services.sendWorker.runOnce();
    const [m, ...rest] = await h.services.messages.forVerification(v.id);
    assert.ok(m);
    assert.equal(rest.length, 0);
    assert.equal(m.channel, 'voice');
    assert.equal(m.recipient, v.phoneNumber);
    assert.equal(m.sender, caller);
    const sentence = `Your code is ${[...v.otp].join(', ')}.`;
    assert.equal(m.body, `${sentence} ${sentence}`);

    const [shown] = (await h.services.inbox.latest(10, v.phoneNumber)).filter((x) => x.verificationId === v.id);
    assert.ok(shown);
    assert.equal(shown.channel, 'voice');
    assert.equal(shown.text, m.body);
    assert.equal(shown.callerId, null);
    const line = JSON.parse(formatMessage(shown, true)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(line).sort(), ['at', 'channel', 'from', 'provider', 'testNumber', 'text', 'to', 'verificationId']);
    assert.equal(line.channel, 'voice');
    assert.equal(line.from, caller);
    assert.match(formatMessage(shown, false), /VOICE to \+\d+ from \+2349010000555: "Your code is/);

    const verified = await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp });
    assert.equal(verified.statusCode, 200);
  });

  it("says the client's voice template for the locale (--channel voice), the SMS templates untouched", async () => {
    const c = await h.client(['otp:send']);
    const token = await h.token(['otp:send'], c);
    const admin = (command: AdminCommand) => runAdminCommand(adminDeps(h.services), command);
    const command: AdminCommand = { name: 'clients.templates.set', id: c.clientId, locale: 'fr', template: 'Bonjour, votre code {app} est {code}. Merci', channel: 'voice' };
    assert.deepEqual(await admin(command), { ok: true, value: { locale: 'fr', channel: 'voice', sample: `Bonjour, votre code est ${[...'9'.repeat(h.config.OTP_LENGTH)].join(', ')}. Merci` } });
    const refused = await admin({ name: 'clients.templates.set', id: c.clientId, locale: 'fr', template: 'Code {code} {code}', channel: 'voice' });
    assert.deepEqual(refused, { ok: false, error: 'a voice template must contain {code} exactly once' });
    const listed = await admin({ name: 'clients.templates.list', id: c.clientId, channel: 'voice' });
    assert.deepEqual(listed, { ok: true, value: { fr: 'Bonjour, votre code {app} est {code}. Merci' } });
    assert.deepEqual(await admin({ name: 'clients.templates.list', id: c.clientId }), { ok: true, value: {} }, 'the SMS templates are apart');

    const v = await createVerification(h, token, { type: 'VOICE_CALL', locale: 'fr-CA' });
    await h.services.sendWorker.runOnce();
    const [m] = await h.services.messages.forVerification(v.id);
    assert.ok(m);
    const said = `Bonjour, votre code est ${[...v.otp].join(', ')}. Merci`;
    assert.equal(m.body, `${said} ${said}`);
    assert.equal((await admin({ name: 'clients.templates.remove', id: c.clientId, locale: 'fr', channel: 'voice' })).ok, true);
  });

  it('speaks in the verification\'s locale where there is a sentence for it', async () => {
    const token = await h.token(['otp:send']);
    const v = await createVerification(h, token, { type: 'VOICE_CALL', locale: 'fr' });
    await h.services.sendWorker.runOnce();
    const [m] = await h.services.messages.forVerification(v.id);
    assert.ok(m);
    assert.ok(m.body.startsWith(`Votre code est ${[...v.otp].join(', ')}.`), m.body);
  });
});
