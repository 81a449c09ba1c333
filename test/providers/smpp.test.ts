import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PDU } from 'smpp';
import type { OutgoingSms, SendResult } from '../../src/channels/provider-port.js';
import { createSmppProvider, smppProvider, type SmppTuning } from '../../src/providers/smpp.js';
import { parseSmppUrl } from '../../src/providers/smpp/settings.js';
import { encodeText } from '../../src/providers/smpp/text.js';
import {
  eventually,
  netSmppMissing,
  receiptPdu,
  recordingContext,
  startFakeSmsc,
  startPerlSmsc,
  type FakeSmsc,
  type SmscEvent,
} from './smpp-peers.js';
import { assertLogsHide, assertModuleDeclares } from './support.js';

const PASSWORD = 'pw5ecret';
const fast: Partial<SmppTuning> = { backoffInitialMs: 100, backoffMaxMs: 400, responseTimeoutMs: 2_000, stopGraceMs: 1_000 };

function values(port: number, overrides: { window?: number; enquireSeconds?: number } = {}) {
  return {
    SMPP_URL: parseSmppUrl(`smpp://otp:${PASSWORD}@127.0.0.1:${port}`),
    SMPP_WINDOW: overrides.window ?? 10,
    SMPP_SYSTEM_TYPE: '',
    SMPP_ENQUIRE_LINK_SECONDS: overrides.enquireSeconds ?? 30,
  };
}

let sendCount = 0;
function sms(text: string, to = '+2348012345678', from = '+15550001111', code = '482913'): OutgoingSms {
  sendCount++;
  return { channel: 'sms', sendId: `s${sendCount}`, verificationId: `v${sendCount}`, to, from, text, code };
}
const never = () => new AbortController().signal;
const transientWith = (result: SendResult, pattern: RegExp) => {
  assert.equal(result.kind, 'transient', JSON.stringify(result));
  assert.match(result.kind === 'transient' ? result.reason : '', pattern);
};

/** Nothing secret reaches the log: not the password, not the code, not the text. */
function assertLogClean(log: readonly string[], ...secrets: string[]) {
  assertLogsHide(log, [PASSWORD, ...secrets]);
}

describe('smpp provider module', () => {
  it('is the smpp SMS provider with no HTTP callbacks, and reads SMPP_URL without ever repeating it', () => {
    assertModuleDeclares(smppProvider, { name: 'smpp', channels: ['sms'], callbacks: false });
    assert.equal(smppProvider.settings.SMPP_URL.secret, true);
    assert.deepEqual(parseSmppUrl('smpp://id:p%40ss@smsc.example:2776'), {
      tls: false, host: 'smsc.example', port: 2776, systemId: 'id', password: 'p@ss',
    });
    assert.deepEqual(parseSmppUrl('ssmpp://id:pw@[::1]'), { tls: true, host: '::1', port: 3550, systemId: 'id', password: 'pw' });
    for (const bad of ['http://id:hunter2@h:1', 'smpp://:hunter2@h:1', 'smpp://id:hunter2@h:1/x', 'not a url hunter2']) {
      assert.throws(() => parseSmppUrl(bad), (e: Error) => !e.message.includes('hunter2'));
    }
    assert.equal(smppProvider.settings.SMPP_WINDOW.parse('10'), 10);
    assert.throws(() => smppProvider.settings.SMPP_WINDOW.parse('0'));
  });

  it('encodes GSM 03.38 as data_coding 0 and anything else as UCS-2, in parts that split no character', () => {
    const one = encodeText('a'.repeat(160), 7);
    assert.equal(one?.dataCoding, 0);
    assert.equal(one?.parts.length, 1);
    const two = encodeText(`${'a'.repeat(152)}€${'b'.repeat(10)}`, 7); // € takes two septets: it may not straddle parts
    assert.equal(two?.parts.length, 2);
    assert.deepEqual([...(two?.parts[0]?.shortMessage.subarray(0, 6) ?? [])], [5, 0, 3, 7, 2, 1]);
    assert.equal(two?.parts[0]?.shortMessage.length, 6 + 152);
    const ucs2 = encodeText(`${'я'.repeat(66)}😀ююю`, 1); // 71 UTF-16 units: two parts of at most 67, the pair kept whole
    assert.equal(ucs2?.dataCoding, 8);
    assert.equal(ucs2?.parts.length, 2);
    assert.equal(ucs2?.parts[0]?.shortMessage.length, 6 + 66 * 2);
    assert.match(ucs2?.parts[1]?.shortMessage.subarray(6).toString('hex') ?? '', /^d83dde00/);
    assert.equal(encodeText('x'.repeat(153 * 256), 0), null);
  });
});

describe('smpp provider against Net::SMPP (Debian libnet-smpp-perl)', { timeout: 20_000 }, () => {
  const missing = netSmppMissing();
  it('binds, sends GSM, UCS-2 and multipart text, hands receipts on, and unbinds on stop', { skip: missing ?? false }, async () => {
    const smsc = await startPerlSmsc('otp', PASSWORD);
    const { context, receipts, log } = recordingContext();
    const provider = createSmppProvider(values(smsc.port), context, fast);
    const submits = () => smsc.events.filter((e) => e.event === 'submit_sm');
    try {
      await provider.start();
      // smsc.pl prints before it answers, but its stdout may reach us after the TCP answer.
      const bind = await eventually(() => smsc.events.find((e) => e.event === 'bind_transceiver'), 'the bind event');
      assert.equal(bind?.ok, true);
      assert.equal(bind?.system_id, 'otp');
      assert.equal(bind?.interface_version, 0x34);

      const gsm = await provider.send(sms('Your code is 482913'), never());
      assert.deepEqual(gsm, { kind: 'accepted', messageId: 'M1' });
      await eventually(() => submits().length === 1 || undefined, 'the submit_sm event');
      assert.deepEqual(pick(submits()[0]), {
        dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '2348012345678',
        source_addr_ton: 1, source_addr_npi: 1, source_addr: '15550001111',
        esm_class: 0, data_coding: 0, registered_delivery: 1,
        short_message_hex: Buffer.from('Your code is 482913').toString('hex'),
      });

      const ucs2 = await provider.send(sms('Ваш код 482913', '+79161234567', 'OTPService'), never());
      assert.deepEqual(ucs2, { kind: 'accepted', messageId: 'M2' });
      await eventually(() => submits().length === 2 || undefined, 'the second submit_sm event');
      const s2 = submits()[1];
      assert.equal(s2?.data_coding, 8);
      assert.equal(s2?.source_addr_ton, 5);
      assert.equal(s2?.source_addr_npi, 0);
      assert.equal(s2?.source_addr, 'OTPService');
      assert.equal(s2?.short_message_hex, Buffer.from('Ваш код 482913', 'utf16le').swap16().toString('hex'));

      const long = `Your code is 482913. ${'This message is long enough to need two parts. '.repeat(4)}`;
      const multi = await provider.send(sms(long), never());
      assert.deepEqual(multi, { kind: 'accepted', messageId: 'M3' }, 'a multipart message is known by its first part');
      await eventually(() => submits().length === 4 || undefined, 'four submit_sm events');
      const [p1, p2] = [submits()[2], submits()[3]];
      assert.equal(p1?.esm_class, 0x40);
      assert.equal(p2?.esm_class, 0x40);
      assert.match(String(p1?.short_message_hex), /^050003..0201/);
      assert.match(String(p2?.short_message_hex), /^050003..0202/);
      assert.equal(String(p1?.short_message_hex).slice(6, 8), String(p2?.short_message_hex).slice(6, 8), 'one reference');

      const undelivered = await provider.send(sms('Your code is 482913', '+2348012345699'), never());
      assert.deepEqual(undelivered, { kind: 'accepted', messageId: 'M5' });

      await eventually(() => receipts.length >= 4 || undefined, 'four receipts');
      await eventually(() => smsc.events.filter((e) => e.event === 'deliver_sm_resp').length === 5 || undefined, 'five deliver_sm_resp');
      assert.deepEqual(
        receipts.map((r) => [r.messageId, r.status]).sort(),
        [['M1', 'DELIVERED'], ['M2', 'DELIVERED'], ['M3', 'DELIVERED'], ['M5', 'UNDELIVERED']],
        'M1 and M5 by the receipted_message_id TLV, M2 by the text, M3 once both of its parts are delivered',
      );
      assert.deepEqual(receipts.find((r) => r.messageId === 'M5')?.detail, 'UNDELIV err:001');
      assert.deepEqual(receipts.find((r) => r.messageId === 'M1')?.at, new Date('2026-11-23T15:01:00Z'));
      assert.ok(smsc.events.filter((e) => e.event === 'deliver_sm_resp').every((e) => e.status === 0));

      await provider.stop();
      await eventually(() => smsc.events.some((e) => e.event === 'unbind') || undefined, 'unbind');
      assertLogClean(log, '482913', 'Your code');
    } finally {
      await provider.stop();
      smsc.stop();
    }
  });
});

function pick(e: SmscEvent | undefined) {
  if (!e) return undefined;
  const { event: _event, message_id: _id, ...rest } = e;
  return rest;
}

/** Runs `body` against a fake SMSC and a started provider, and tears both down. */
async function withFake(
  smsc: FakeSmsc,
  options: { window?: number; enquireSeconds?: number; receiptOutcome?: () => Promise<void>; tuning?: Partial<SmppTuning> },
  body: (p: ReturnType<typeof createSmppProvider>, rec: ReturnType<typeof recordingContext>) => Promise<void>,
) {
  const rec = recordingContext(options.receiptOutcome);
  const provider = createSmppProvider(values(smsc.port, options), rec.context, { ...fast, ...options.tuning });
  try {
    await provider.start();
    await body(provider, rec);
    assertLogClean(rec.log, '482913');
  } finally {
    await provider.stop();
    await smsc.close();
  }
}

describe('smpp provider fault cases (the smpp package as SMSC)', { timeout: 60_000 }, () => {
  it('maps command_status: throttled and queue full are transient, address errors permanent, others permanent with hex', async () => {
    const statuses = [0x58, 0x14, 0x08, 0x0b, 0x0a, 0x50, 0x45];
    const smsc = await startFakeSmsc({ onSubmit: (s, f) => f.answer(s, { command_status: statuses[f.submits.length - 1] }) });
    await withFake(smsc, {}, async (provider) => {
      const results: SendResult[] = [];
      for (const _ of statuses) results.push(await provider.send(sms('Your code is 482913'), never()));
      assert.deepEqual(results.map((r) => r.kind), ['transient', 'transient', 'transient', 'permanent', 'permanent', 'permanent', 'permanent']);
      transientWith(results[0] ?? { kind: 'permanent', reason: '' }, /ESME_RTHROTTLED \(0x00000058\)/);
      assert.match(JSON.stringify(results[3]), /ESME_RINVDSTADR \(0x0000000B\)/);
      assert.match(JSON.stringify(results[6]), /0x00000045/);
    });
  });

  it('ends submits outstanding at a drop as transient, binds again, and the next send works', async () => {
    const smsc = await startFakeSmsc({
      onSubmit: (s, f) => {
        if (f.binds.length > 1) f.answer(s, { message_id: 'after-drop' });
      },
    });
    await withFake(smsc, {}, async (provider) => {
      const pending = [provider.send(sms('Your code is 482913'), never()), provider.send(sms('Your code is 482913'), never())];
      await eventually(() => smsc.submits.length === 2 || undefined, 'two submits');
      smsc.sessions[0]?.destroy();
      for (const r of await Promise.all(pending)) transientWith(r, /connection lost/);
      transientWith(await provider.send(sms('Your code is 482913'), never()), /not bound/);
      await eventually(() => smsc.binds.length === 2 || undefined, 'a second bind');
      await eventually(() => provider['link'].bound || undefined, 'bound again');
      assert.deepEqual(await provider.send(sms('Your code is 482913'), never()), { kind: 'accepted', messageId: 'after-drop' });
    });
  });

  it('drops and binds again at once on a PDU shorter than its header, failing the submits waiting on it as on a lost connection', async () => {
    // command_length 4 and then 0: header-less PDUs, written raw in answer to the first submit of each bind.
    const malformed = [Buffer.from([0, 0, 0, 4]), Buffer.from([0, 0, 0, 0, 0, 0, 0, 0])];
    const smsc = await startFakeSmsc({
      onSubmit: (s, f) => {
        const bad = malformed[f.binds.length - 1];
        if (bad) s.session.socket.write(bad);
        else f.answer(s, { message_id: 'after-malformed' });
      },
    });
    // A response time-out far beyond the test's own: a frozen bind would end the sends by it, never by the drop.
    await withFake(smsc, { tuning: { responseTimeoutMs: 60_000 } }, async (provider, { log }) => {
      for (const length of [4, 0]) {
        transientWith(await provider.send(sms('Your code is 482913'), never()), /connection lost/);
        assert.ok(log.some((l) => l.includes(`command_length ${length} is shorter than the 16-byte header`)), log.join('\n'));
        await eventually(() => provider['link'].bound || undefined, 'bound again');
      }
      assert.equal(smsc.binds.length, 3);
      assert.deepEqual(await provider.send(sms('Your code is 482913'), never()), { kind: 'accepted', messageId: 'after-malformed' });
    });
  });

  it('binds again with back-off after a refused bind', async () => {
    const smsc = await startFakeSmsc({ bindStatus: (n) => (n < 2 ? 0x0d : 0) });
    await withFake(smsc, { tuning: { random: () => 0 } }, async (provider, { log }) => {
      transientWith(await provider.send(sms('Your code is 482913'), never()), /not bound/);
      await eventually(() => smsc.binds.length === 3 || undefined, 'a third bind');
      const [a, b, c] = smsc.binds.map((x) => x.at);
      // random 0: half the capped delay, 50 then 100 ms; the gaps grow.
      assert.ok((b ?? 0) - (a ?? 0) >= 45 && (c ?? 0) - (b ?? 0) >= 95, `gaps ${(b ?? 0) - (a ?? 0)} ${(c ?? 0) - (b ?? 0)}`);
      assert.ok(log.some((l) => l.includes('ESME_RBINDFAIL') || l.includes('0x0000000D')));
      await eventually(() => provider['link'].bound || undefined, 'bound');
      assert.equal((await provider.send(sms('Your code is 482913'), never())).kind, 'accepted');
    });
  });

  it('binds an SMSC that accepts binds and drops them ever more slowly, up to the cap, not at the first delay forever', async () => {
    const smsc = await startFakeSmsc({ dropAfterBind: true });
    // random 0.5: three quarters of the capped delay, 75, 150, 300, 600, then 750 ms at the cap.
    await withFake(smsc, { tuning: { backoffInitialMs: 100, backoffMaxMs: 1_000, random: () => 0.5 } }, async () => {
      await new Promise((r) => setTimeout(r, 3_000));
      const at = smsc.binds.map((b) => b.at);
      // Reset at every accepted bind, the delay stayed 75 ms: some 30 binds in 3 s. Growing: 7 at most.
      assert.ok(at.length >= 3 && at.length <= 8, `${at.length} binds in 3 s`);
      const gaps = at.slice(1).map((t, i) => t - (at[i] ?? t));
      assert.ok((gaps[2] ?? 0) >= 300 - 10 && (gaps[2] ?? 0) > (gaps[0] ?? 0), `the gaps grow: ${gaps.join(', ')}`);
    });
  });

  it('starts the back-off again once a bind has proved itself by an answered request', async () => {
    const smsc = await startFakeSmsc({ bindStatus: (n) => (n < 4 ? 0x0d : 0) });
    // Four refusals take the delay to 100 * 2^4 * 0.75 = 1200 ms; a reset one is 75 ms.
    await withFake(smsc, { tuning: { backoffInitialMs: 100, backoffMaxMs: 60_000, random: () => 0.5 } }, async (provider) => {
      await eventually(() => provider['link'].bound || undefined, 'bound at the fifth bind', 8_000);
      assert.equal((await provider.send(sms('Your code is 482913'), never())).kind, 'accepted');
      smsc.sessions[4]?.destroy();
      await eventually(() => smsc.binds.length === 6 || undefined, 'a sixth bind');
      const [dropped, again] = [smsc.binds[4]?.at ?? 0, smsc.binds[5]?.at ?? 0];
      assert.ok(again - dropped < 1_000, `bound again ${again - dropped} ms after the fifth bind, not after 1200 ms or more`);
    });
  });

  it('hands on a receipt that arrives before its submit_sm_resp, under that id, after the send returns', async () => {
    const smsc = await startFakeSmsc({
      onSubmit: (s, f) => {
        s.session.send(receiptPdu('EARLY1', 'DELIVRD'));
        setTimeout(() => f.answer(s, { message_id: 'EARLY1' }), 100);
      },
    });
    await withFake(smsc, {}, async (provider, { receipts, order }) => {
      const result = await provider.send(sms('Your code is 482913'), never());
      order.push('send returned');
      assert.deepEqual(result, { kind: 'accepted', messageId: 'EARLY1' });
      await eventually(() => smsc.deliverResponses.length === 1 || undefined, 'deliver_sm_resp');
      assert.deepEqual(order, ['send returned', 'receipt EARLY1']);
      assert.deepEqual(receipts.map((r) => [r.messageId, r.status]), [['EARLY1', 'DELIVERED']]);
    });
  });

  it('answers deliver_sm_resp only after onReceipt resolves, and ESME_RX_T_APPN when it rejects', async () => {
    const smsc = await startFakeSmsc();
    let release = () => undefined as void;
    let fail = false;
    const outcome = () => (fail ? Promise.reject(new Error('database down')) : new Promise<void>((r) => (release = r)));
    await withFake(smsc, { receiptOutcome: outcome }, async (_provider, { order }) => {
      smsc.sessions[0]?.send(receiptPdu('OLD1', 'DELIVRD'));
      await eventually(() => order.length === 1 || undefined, 'onReceipt called');
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(smsc.deliverResponses.length, 0, 'no deliver_sm_resp before the receipt is recorded');
      release();
      await eventually(() => smsc.deliverResponses.length === 1 || undefined, 'deliver_sm_resp');
      assert.equal(smsc.deliverResponses[0]?.command_status, 0);
      fail = true;
      smsc.sessions[0]?.send(receiptPdu('OLD2', 'UNDELIV'));
      await eventually(() => smsc.deliverResponses.length === 2 || undefined, 'second deliver_sm_resp');
      assert.equal(smsc.deliverResponses[1]?.command_status, 0x64);
    });
  });

  it('keeps at most SMPP_WINDOW submit_sm outstanding and queues the rest', async () => {
    const smsc = await startFakeSmsc({
      onSubmit: (s, f) => {
        const id = `W${f.submits.length}`;
        setTimeout(() => f.answer(s, { message_id: id }), 30);
      },
    });
    await withFake(smsc, { window: 3 }, async (provider) => {
      const results = await Promise.all(Array.from({ length: 10 }, () => provider.send(sms('Your code is 482913'), never())));
      assert.deepEqual(results.map((r) => (r.kind === 'accepted' ? r.messageId : r.kind)).sort(), Array.from({ length: 10 }, (_, i) => `W${i + 1}`).sort());
      assert.equal(smsc.submits.length, 10);
      assert.equal(smsc.maxOutstanding, 3);
    });
  });

  it('returns transient at once when the signal aborts, queued or waiting for the response, and keeps the slot until answered', async () => {
    const held: Array<() => void> = [];
    const smsc = await startFakeSmsc({ onSubmit: (s, f) => held.push(() => f.answer(s, { message_id: 'LATE' })) });
    await withFake(smsc, { window: 1 }, async (provider) => {
      const first = new AbortController();
      const second = new AbortController();
      const a = provider.send(sms('Your code is 482913'), first.signal);
      const b = provider.send(sms('Your code is 482913'), second.signal);
      await eventually(() => smsc.submits.length === 1 || undefined, 'first submit');
      second.abort();
      transientWith(await b, /aborted while waiting for the SMPP window/);
      first.abort();
      transientWith(await a, /aborted while waiting for submit_sm_resp/);
      const c = provider.send(sms('Your code is 482913'), never());
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(smsc.submits.length, 1, 'the aborted submit_sm still holds the only slot');
      for (const answer of held.splice(0)) answer();
      await eventually(() => smsc.submits.length === 2 || undefined, 'the queued send goes out');
      for (const answer of held.splice(0)) answer();
      assert.deepEqual(await c, { kind: 'accepted', messageId: 'LATE' });
      assert.equal(smsc.maxOutstanding, 1);
    });
  });

  it('answers the SMSC enquire_link and sends its own every SMPP_ENQUIRE_LINK_SECONDS', async () => {
    const smsc = await startFakeSmsc();
    await withFake(smsc, { enquireSeconds: 1 }, async () => {
      const session = smsc.sessions[0];
      const answered = new Promise<number>((resolve) => session?.send(new PDU('enquire_link'), (r) => resolve(r.command_status)));
      assert.equal(await answered, 0);
      const ours = new Promise<void>((resolve) => session?.on('pdu', (p: PDU) => p.command === 'enquire_link' && resolve()));
      await ours;
    });
  });

  it('takes an unanswered enquire_link for a dead link: drops it and binds again', async () => {
    const smsc = await startFakeSmsc({ answerEnquireLink: false });
    await withFake(smsc, { enquireSeconds: 1, tuning: { responseTimeoutMs: 200 } }, async (provider, { log }) => {
      await eventually(() => smsc.binds.length === 2 || undefined, 'a second bind', 4_000);
      assert.ok(smsc.enquireLinks >= 1);
      assert.ok(log.some((l) => l.includes('enquire_link not answered')));
      await eventually(() => provider['link'].bound || undefined, 'bound again');
      assert.equal((await provider.send(sms('Your code is 482913'), never())).kind, 'accepted');
    });
  });

  it('unbinds on stop after letting a send in flight end', async () => {
    const smsc = await startFakeSmsc({ onSubmit: (s, f) => setTimeout(() => f.answer(s, { message_id: 'LAST' }), 100) });
    await withFake(smsc, {}, async (provider) => {
      const inFlight = provider.send(sms('Your code is 482913'), never());
      await eventually(() => smsc.submits.length === 1 || undefined, 'the submit');
      const stopped = provider.stop();
      transientWith(await provider.send(sms('Your code is 482913'), never()), /stopping/);
      assert.deepEqual(await inFlight, { kind: 'accepted', messageId: 'LAST' });
      await stopped;
      assert.equal(smsc.unbinds, 1);
    });
  });

  it('stops within seconds, as the server stops it, when the SMSC never answers unbind', { timeout: 60_000 }, async () => {
    const smsc = await startFakeSmsc({ answerUnbind: false });
    const rec = recordingContext();
    // The module's own create, as the server makes it: the default timings (a 30 s response time-out).
    const provider = smppProvider.create(values(smsc.port), rec.context);
    try {
      await provider.start();
      await eventually(() => smsc.binds.length === 1 || undefined, 'the bind');
      const started = Date.now();
      await provider.stop();
      const took = Date.now() - started;
      assert.equal(smsc.unbinds, 1);
      // SHUTDOWN_GRACE_MS is 10 s by default and covers the HTTP drain too; unbind alone used to take 30 s.
      assert.ok(took < 5_000, `stop() took ${took} ms`);
      assert.ok(rec.log.some((l) => l.includes('SMPP unbind not answered')));
    } finally {
      await provider.stop();
      await smsc.close();
    }
  });

  it('fails fast while the SMSC cannot be reached, and start() still returns', async () => {
    const smsc = await startFakeSmsc();
    const port = smsc.port;
    await smsc.close();
    const rec = recordingContext();
    const provider = createSmppProvider(values(port), rec.context, fast);
    try {
      await provider.start();
      transientWith(await provider.send(sms('Your code is 482913'), never()), /not bound/);
      assert.ok(rec.log.some((l) => l.includes('ECONNREFUSED')));
    } finally {
      await provider.stop();
    }
    assertLogClean(rec.log, '482913');
  });
});
