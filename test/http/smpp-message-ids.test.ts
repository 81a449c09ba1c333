import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createVerification, eventually as eventuallyAsync, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { eventually, netSmppMissing, startPerlSmsc, type PerlSmsc } from '../providers/smpp-peers.js';

interface Delivered {
  status: string;
  failureReason: string | null;
  delivery: { provider: string | null; status: string; sends: number };
}

/**
 * Contract 8: a receipt goes to the send it is for. An SMSC numbers its messages again from the start after a
 * restart (Debian's Net::SMPP in test/peers/smsc.pl, restarted on the same port: M1, M2, ... again), so a new
 * message can get the id of an older one. The newest send with an id gets its receipts; before, the first
 * mapping stayed, and an UNDELIV for the new message failed the older verification while the new one stayed SENT.
 */
forEachDatabase('SMPP message ids reused after an SMSC restart', (kind) => {
  const missing = netSmppMissing();
  let smsc: PerlSmsc;
  let h: Harness;
  before(async () => {
    if (missing) return;
    smsc = await startPerlSmsc('otpsvc', 'bindpass');
    h = await createHarness(kind, { env: { SMS_PROVIDER: 'smpp', SMPP_URL: `smpp://otpsvc:bindpass@127.0.0.1:${smsc.port}` } });
    await h.services.providers.start();
  });
  after(async () => {
    if (missing) return;
    await h.close();
    await smsc.stop();
  });

  const record = async (token: string, id: string): Promise<Delivered> =>
    ((await h.call('GET', `/v1/otp/${id}`, token)).json() as { data: Delivered }).data;

  it('sends the receipt of the new M1 to the new verification, not to the one the first M1 was for', { skip: missing ?? false }, async () => {
    const token = await h.token();
    // No receipt for a number ending in 98: the first verification stays SENT under M1.
    const older = await createVerification(h, token, { phoneNumber: `${nextLocalNumber().slice(0, -2)}98` });
    await eventuallyAsync(async () => (await record(token, older.id)).delivery.status === 'SENT');
    assert.equal(smsc.events.find((e) => e.event === 'submit_sm')?.message_id, 'M1');

    const port = smsc.port;
    await smsc.stop();
    smsc = await startPerlSmsc('otpsvc', 'bindpass', { port });
    await eventually(() => smsc.events.find((e) => e.event === 'bind_transceiver' && e.ok === true), 'the bind to the restarted SMSC', 10_000);
    // The bind is made once the SMSC has answered bind_transceiver: give the answer a moment to arrive.
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Undelivered (a number ending in 99), under M1 again.
    const newer = await createVerification(h, token, { phoneNumber: `${nextLocalNumber().slice(0, -2)}99` });
    await eventually(() => smsc.events.find((e) => e.event === 'deliver_sm_resp'), 'the receipt to be answered', 10_000);
    assert.equal(smsc.events.find((e) => e.event === 'submit_sm')?.message_id, 'M1');
    await eventuallyAsync(async () => (await record(token, newer.id)).status === 'FAILED');
    const n = await record(token, newer.id);
    assert.deepEqual({ failureReason: n.failureReason, delivery: n.delivery.status }, { failureReason: 'UNDELIVERABLE', delivery: 'UNDELIVERED' });
    const o = await record(token, older.id);
    assert.deepEqual({ status: o.status, delivery: o.delivery.status }, { status: 'PENDING', delivery: 'SENT' }, 'the older verification is untouched');
  });

});
