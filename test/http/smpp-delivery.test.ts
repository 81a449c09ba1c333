import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createVerification, eventually as eventuallyAsync, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { deliveredNumber, eventually, netSmppMissing, startPerlSmsc, type PerlSmsc } from '../providers/smpp-peers.js';

interface Delivered {
  status: string;
  failureReason: string | null;
  delivery: { provider: string | null; status: string; sends: number };
}

/**
 * Contract 8 through the service and a real SMSC the project did not write (Debian's Net::SMPP, test/peers/smsc.pl):
 * a create goes out as submit_sm over the bind, and the SMSC's deliver_sm receipt moves the record (a
 * destination ending in 99 is undelivered there, so with no other provider the verification is FAILED).
 */
forEachDatabase('delivery over SMPP, receipts as deliver_sm', (kind) => {
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
    smsc.stop();
  });

  const record = async (token: string, id: string): Promise<Delivered> =>
    ((await h.call('GET', `/v1/otp/${id}`, token)).json() as { data: Delivered }).data;

  it('sends the code as submit_sm and records the DELIVRD receipt', { skip: missing ?? false }, async () => {
    const token = await h.token();
    const v = await createVerification(h, token, { phoneNumber: deliveredNumber() });
    const submit = await eventually(() => smsc.events.find((e) => e.event === 'submit_sm' && String(e.destination_addr) === v.phoneNumber.slice(1)), 'the submit_sm');
    assert.equal(submit.event, 'submit_sm');
    // The workers' once-a-second task applies a receipt kept before its send's acceptance committed; the harness
    // runs no periodic task, so the wait does its part. On a time-out, what the SMSC and the database saw.
    await eventuallyAsync(async () => {
      await h.services.deliveries.applyParkedReceipts(100);
      return (await record(token, v.id)).delivery.status === 'DELIVERED';
    }).catch(async (err: unknown) => {
      const parked = await h.services.db.db.selectFrom('parked_receipts').selectAll().execute();
      const messages = await h.services.db.db.selectFrom('provider_messages').selectAll().execute();
      throw new Error(
        `${String(err)}; record ${JSON.stringify(await record(token, v.id))}; SMSC ${JSON.stringify(smsc.events)}; kept receipts ${JSON.stringify(parked)}; message ids ${JSON.stringify(messages)}`,
      );
    });
    const r = await record(token, v.id);
    assert.deepEqual({ provider: r.delivery.provider, sends: r.delivery.sends, status: r.status }, { provider: 'smpp', sends: 1, status: 'PENDING' });
  });

  it('fails the verification UNDELIVERABLE on an UNDELIV receipt with no other provider', { skip: missing ?? false }, async () => {
    const token = await h.token();
    const local = nextLocalNumber();
    const phoneNumber = `${local.slice(0, -2)}99`;
    const v = await createVerification(h, token, { phoneNumber });
    await eventuallyAsync(async () => (await record(token, v.id)).status === 'FAILED');
    const r = await record(token, v.id);
    assert.deepEqual({ failureReason: r.failureReason, delivery: r.delivery.status }, { failureReason: 'UNDELIVERABLE', delivery: 'UNDELIVERED' });
  });
});
