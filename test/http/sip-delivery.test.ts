import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { exactly, sippAddress, sippMissing, startSipp, type SippRun } from '../providers/sipp.js';
import { createVerification, eventually, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

interface Delivered extends RecordBody {
  delivery: { channel: string; provider: string | null; status: string; sends: number };
}

/**
 * Contract 8 (`DROPPED_CALL`) through the API, the send worker and the sip provider, with SIPp as the trunk's far
 * end: the call comes from a caller id of CALLER_ID_RANGES whose last 4 digits are the code, SIPp rings and takes
 * the CANCEL, and the record reads DELIVERED on the CALL channel through sip.
 */
forEachDatabase('a dropped call through a SIP trunk (SIPp)', (kind) => {
  const missing = sippMissing();
  let sipp: SippRun;
  let h: Harness;
  before(async () => {
    if (missing) return;
    sipp = await startSipp('ring.xml', 'udp', {
      FROM_RE: `^ *<sip:\\+234812000[0-9]{4}@${exactly(sippAddress)}>;tag=[0-9a-f]+ *$`,
      PAI_RE: `^ *<sip:\\+234812000[0-9]{4}@${exactly(sippAddress)}> *$`,
      STATUS: '180',
      PHRASE: 'Ringing',
    });
    h = await createHarness(kind, {
      env: {
        CALL_PROVIDER: 'sip',
        SIP_TRUNK_URI: `sip:${sippAddress}:${sipp.port}`,
        SIP_LOCAL_ADDRESS: '127.0.0.1',
        CALLER_ID_RANGES: '+2348120000000-+2348120009999',
      },
    });
    await h.services.providers.start();
  });
  after(async () => {
    if (missing) return;
    await h.close();
    sipp.stop();
  });

  it('rings from the caller id that carries the code, cancels, and records DELIVERED', { skip: missing ?? false }, async () => {
    const token = await h.token();
    const v = await createVerification(h, token, { type: 'DROPPED_CALL' });
    const record = async (): Promise<Delivered> => ((await h.call('GET', `/v1/otp/${v.id}`, token)).json() as { data: Delivered }).data;
    await eventually(async () => (await record()).delivery.status === 'DELIVERED', 10_000);
    const r = await record();
    assert.deepEqual(
      { status: r.status, channel: r.delivery.channel, provider: r.delivery.provider, delivery: r.delivery.status, sends: r.delivery.sends },
      { status: 'PENDING', channel: 'CALL', provider: 'sip', delivery: 'DELIVERED', sends: 1 },
    );
    assert.equal(await sipp.exited, 0, `SIPp's scenario (ring, CANCEL, 487, ACK) did not pass: ${sipp.errors()}`);
    const from = /^From: *<sip:(\+\d+)@/m.exec(sipp.messages())?.[1] ?? '';
    assert.equal(from.slice(-4), v.otp, 'the last 4 digits of the caller id are the code');
    assert.equal(`0${from.slice(4)}`, v.pairedNumber, 'the caller id is the pairedNumber');
    const dialled = /^INVITE sip:(\+\d+)@/m.exec(sipp.messages())?.[1];
    assert.equal(dialled, v.phoneNumber, 'the call goes to the number being verified');
  });
});
