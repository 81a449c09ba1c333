import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { runAudited } from '../../src/admin/audited.js';
import type { AdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { createVerification, e164Of, eventually as until, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { gatewayReceipt } from '../support/gateway.js';
import type { Harness } from '../support/harness.js';
import { startSmscAndGateway, type SmscAndGateway } from '../support/smsc-and-gateway.js';
import { deliveredNumber, eventually, netSmppMissing, type PerlSmsc } from '../providers/smpp-peers.js';
import type { Receiver } from '../webhooks/helpers.js';

interface Attempt {
  channel: string;
  provider: string;
  status: string;
}
interface Failed {
  id: string;
  status: string;
  failureReason: string | null;
  delivery: { provider: string | null; status: string; sends: number };
  deliveries: Attempt[];
}

/** A fresh local number the test SMSC takes and never sends a receipt for (smsc.pl withholds them for ...98). */
const silentNumber = () => `${nextLocalNumber().slice(0, -2)}98`;
/** One it takes and reports UNDELIV for (...99). */
const undeliveredNumber = () => `${nextLocalNumber().slice(0, -2)}99`;

/**
 * Contract 17, delivery-confirmed failover (`routes set ... --failover-after N`): a code a provider took and did
 * not report DELIVERED within N seconds, its verification still PENDING, goes once through the route's next
 * provider. The providers are a real SMSC the project did not write (Debian's Net::SMPP, test/peers/smsc.pl,
 * which withholds receipts for numbers ending in 98) and the operator's HTTP gateway (a local receiver whose
 * receipts the test posts, signed). The clock is the harness's; the workers' failover task is run as they run
 * it every 200 ms.
 */
forEachDatabase('delivery-confirmed failover', (kind) => {
  const missing = netSmppMissing();
  let peers: SmscAndGateway;
  let h: Harness;
  let smsc: PerlSmsc;
  let gateway: Receiver;
  let secret: string;
  before(async () => {
    if (missing) return;
    peers = await startSmscAndGateway(kind);
    ({ h, smsc, gateway, secret } = peers);
  });
  after(async () => {
    if (!missing) await peers.close();
  });

  const route = async (providers: string[], failoverAfterSeconds: number | null) => {
    const command: AdminCommand = { name: 'routes.set', channel: 'sms', destination: 'NG', providers, failoverAfterSeconds };
    const r = await runAudited(adminDeps(h.services), 'cli', command);
    assert.ok(r.ok, r.ok ? '' : r.error);
  };
  const record = async (token: string, id: string): Promise<Failed> => {
    await h.services.sendWorker.idle();
    const res = await h.call('GET', `/v1/otp/${id}`, token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Failed }).data;
  };
  /** The clock moves on, and the workers' failover task runs once. */
  const later = async (seconds: number) => {
    h.clock.advance(seconds * 1000);
    await h.services.deliveries.takeDueFailovers();
    await h.services.sendWorker.idle();
  };
  const gatewaySends = (to: string) => gateway.requests.map((r) => JSON.parse(r.body) as { id: string; to: string; text: string }).filter((b) => b.to === to);
  const smscSends = (to: string) => smsc.events.filter((e) => e.event === 'submit_sm' && e.destination_addr === to.slice(1));
  const shape = (v: Failed) => v.deliveries.map((a) => `${a.provider} ${a.status}`);
  /** Waits for the SMSC's receipt to move the record (a receipt before its acceptance committed is kept, then applied). */
  const receipted = (token: string, id: string, moved: (r: Failed) => boolean) =>
    until(async () => {
      await h.services.deliveries.applyParkedReceipts(100);
      return moved(await record(token, id));
    });

  it('sends the same code once through the next provider when the first reports no delivery in time, and not before', { skip: missing ?? false }, async () => {
    await route(['smpp', 'http'], 20);
    const token = await h.token();
    const phoneNumber = silentNumber();
    const to = e164Of(phoneNumber);
    const v = await createVerification(h, token, { phoneNumber });
    await eventually(() => smscSends(to).length === 1, 'the SMSC to take the code');
    await until(async () => shape(await record(token, v.id)).join() === 'smpp SENT');
    await later(19);
    assert.equal(gatewaySends(to).length, 0, 'not before its time');
    await later(2);
    const [second] = gatewaySends(to);
    assert.ok(second, 'the gateway got the code');
    const [firstSubmit] = smscSends(to);
    assert.equal(Buffer.from(String(firstSubmit?.short_message_hex), 'hex').toString('latin1'), second.text, 'the same code, the same text');
    const moved = await record(token, v.id);
    assert.deepEqual(shape(moved), ['smpp SENT', 'http SENT']);
    assert.deepEqual({ status: moved.status, provider: moved.delivery.provider, sends: moved.delivery.sends }, { status: 'PENDING', provider: 'http', sends: 2 });
    assert.match((await h.services.metrics.render()).body, /otp_delivery_failovers_total\{channel="sms",from="smpp",to="http"\} 1\b/);
    // The gateway delivers it; no provider is left after it, and the clock moves nothing more.
    assert.equal((await gatewayReceipt(h, { messageId: `gw-${second.id}`, status: 'DELIVERED' }, secret)).statusCode, 200);
    await later(60);
    const delivered = await record(token, v.id);
    assert.deepEqual(shape(delivered), ['smpp SENT', 'http DELIVERED']);
    assert.equal(delivered.delivery.status, 'DELIVERED');
    assert.equal(gatewaySends(to).length, 1, 'never a second send through a provider');
    assert.equal(smscSends(to).length, 1);
  });

  it('leaves a code delivered in time where it is, and a route without --failover-after waits for the receipt', { skip: missing ?? false }, async () => {
    await route(['smpp', 'http'], 20);
    const token = await h.token();
    const phoneNumber = deliveredNumber();
    const v = await createVerification(h, token, { phoneNumber });
    await receipted(token, v.id, (r) => r.delivery.status === 'DELIVERED');
    await later(21);
    assert.deepEqual(shape(await record(token, v.id)), ['smpp DELIVERED']);
    assert.equal(gatewaySends(e164Of(phoneNumber)).length, 0);

    await route(['smpp', 'http'], null);
    const silent = silentNumber();
    const waiting = await createVerification(h, token, { phoneNumber: silent });
    await eventually(() => smscSends(e164Of(silent)).length === 1, 'the SMSC to take the code');
    await until(async () => shape(await record(token, waiting.id)).join() === 'smpp SENT');
    await later(120);
    assert.deepEqual(shape(await record(token, waiting.id)), ['smpp SENT']);
    assert.equal(gatewaySends(e164Of(silent)).length, 0);
  });

  it("records a late receipt on its own send, and an undelivered last send leaves the verification to the earlier one's code", { skip: missing ?? false }, async () => {
    await route(['http', 'smpp'], 20);
    const token = await h.token();
    // The gateway takes it and says nothing; the SMSC, next, reports it undelivered: no provider is left, but the
    // gateway's code may still arrive, so the verification stays PENDING.
    const phoneNumber = undeliveredNumber();
    const to = e164Of(phoneNumber);
    const v = await createVerification(h, token, { phoneNumber });
    await eventually(() => gatewaySends(to).length === 1, 'the gateway to take the code');
    const [first] = gatewaySends(to);
    assert.ok(first);
    // Its acceptance committed (the failover's time is set with it), then the clock moves.
    await until(async () => shape(await record(token, v.id)).join() === 'http SENT');
    await later(21);
    await receipted(token, v.id, (r) => shape(r).join() === 'http SENT,smpp UNDELIVERED');
    const waiting = await record(token, v.id);
    assert.deepEqual({ status: waiting.status, failureReason: waiting.failureReason }, { status: 'PENDING', failureReason: null });
    // The gateway's receipt comes late: recorded on its own attempt; the latest send is as it was.
    assert.equal((await gatewayReceipt(h, { messageId: `gw-${first.id}`, status: 'DELIVERED' }, secret)).statusCode, 200);
    const late = await record(token, v.id);
    assert.deepEqual(shape(late), ['http DELIVERED', 'smpp UNDELIVERED']);
    assert.deepEqual({ status: late.status, provider: late.delivery.provider, delivery: late.delivery.status }, { status: 'PENDING', provider: 'smpp', delivery: 'UNDELIVERED' });
  });
});
