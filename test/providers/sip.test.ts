import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { OutgoingCall, SendResult } from '../../src/channels/provider-port.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createSipProvider, sipProvider, type SipTuning } from '../../src/providers/sip.js';
import { exactly, freePort, sippAddress, sippMissing, startSipp, sipTrunkSettings } from './sipp.js';
import { assertLogsHide, assertModuleDeclares, recordingContext } from './support.js';

/**
 * The sip provider against SIPp (Debian's sip-tester) as the trunk's far end, over UDP and TCP: SIPp on
 * 127.0.0.2, the provider on 127.0.0.1. Every scenario checks the caller id in From and P-Asserted-Identity with
 * a regexp that fails SIPp's call, and so its exit status, when the header is wrong.
 */

const missing = sippMissing();
const USER = 'otpsvc';
const PASSWORD = 'Pa55-word';
const callerId = '+2348120004821';
const call: OutgoingCall = { channel: 'call', sendId: 'send-1', verificationId: 'ver-1', to: '+2348012345678', callerId };
const fast: Partial<SipTuning> = { lingerMs: 1_000, stopGraceMs: 3_000, connectTimeoutMs: 2_000 };
/** The ring time the tests give calls (CALL_RING_SECONDS). */
const RING_SECONDS = 1;

/** The checks of every scenario: the caller id, exactly, in From (with our tag) and P-Asserted-Identity. */
const identityWords = {
  FROM_RE: `^ *<sip:${exactly(callerId)}@${exactly(sippAddress)}>;tag=[0-9a-f]+ *$`,
  PAI_RE: `^ *<sip:${exactly(callerId)}@${exactly(sippAddress)}> *$`,
};

interface Setup {
  readonly transport: 'udp' | 'tcp';
  readonly credentials?: { readonly username: string; readonly password: string } | null;
  readonly ringSeconds?: number;
}

function provider(port: number, setup: Setup) {
  const context = { ...recordingContext(null), callRingSeconds: setup.ringSeconds ?? RING_SECONDS };
  const credentials = setup.credentials === undefined ? { username: USER, password: PASSWORD } : setup.credentials;
  const p = createSipProvider(
    sipTrunkSettings(`sip:${sippAddress}:${port};transport=${setup.transport}`, { SIP_USERNAME: credentials?.username, SIP_PASSWORD: credentials?.password }),
    context,
    fast,
  );
  return { provider: p, context };
}

interface Placed {
  readonly result: SendResult;
  readonly ms: number;
  /** SIPp's message trace and errors, read once it ended. */
  readonly messages: string;
  readonly errors: string;
  /** SIPp's exit code, or 'running' when it had not ended 10 s after the call. */
  readonly sippExit: number | null | 'running';
  readonly lines: readonly string[];
}

/** Runs one scenario, places the call through a fresh provider, and collects what both ends did. */
async function place(
  scenario: string,
  setup: Setup,
  words: Readonly<Record<string, string>> = {},
  signal: AbortSignal = new AbortController().signal,
): Promise<Placed> {
  const sipp = await startSipp(scenario, setup.transport, { ...identityWords, ...words });
  const { provider: p, context } = provider(sipp.port, setup);
  try {
    await p.start();
    const started = performance.now();
    const result = await p.send(call, signal);
    const ms = performance.now() - started;
    let timer: NodeJS.Timeout | undefined;
    const sippExit = await Promise.race([
      sipp.exited,
      new Promise<'running'>((resolve) => (timer = setTimeout(() => resolve('running'), 10_000))),
    ]);
    clearTimeout(timer);
    await p.stop();
    return { result, ms, messages: sipp.messages(), errors: sipp.errors(), sippExit, lines: context.lines };
  } finally {
    sipp.stop();
  }
}

function accepted(placed: Placed): void {
  const { result } = placed;
  assert.equal(result.kind, 'accepted', JSON.stringify(result));
  assert.equal(result.kind === 'accepted' && result.delivered, true, 'a call that rang is delivered');
  const callId = /^Call-ID: *(\S+)/im.exec(placed.messages)?.[1];
  assert.equal(result.kind === 'accepted' && result.messageId, callId, 'the message id is the Call-ID');
}

function failed(placed: Placed, kind: 'transient' | 'permanent', reason: RegExp): void {
  const { result } = placed;
  assert.equal(result.kind, kind, JSON.stringify(result));
  assert.match(result.kind === kind ? result.reason : '', reason);
}

function sippPassed(placed: Placed): void {
  assert.equal(placed.sippExit, 0, `SIPp's scenario did not pass: ${placed.errors}`);
}

/** How often SIPp received `method` (requests only, as its message trace shows them). */
function received(placed: Placed, method: string): number {
  return placed.messages.split(/message received \[\d+\] bytes :\s*\n\s*\n/).filter((m) => m.startsWith(`${method} `)).length;
}

describe('sip provider module', () => {
  it('declares dropped calls and voice calls, and no HTTP callbacks', () => {
    assertModuleDeclares(sipProvider, { name: 'sip', channels: ['call', 'voice'], callbacks: false });
  });

  it('a start with CALL_PROVIDER=sip names SIP_TRUNK_URI when it is missing or wrong, never echoing the password', () => {
    const problems = (env: Record<string, string>): string => {
      try {
        loadConfig({ CALL_PROVIDER: 'sip', ...env });
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.message;
      }
      return '';
    };
    assert.match(problems({}), /SIP_TRUNK_URI: required by the sip provider/);
    assert.match(problems({ SIP_TRUNK_URI: 'sips:trunk.example.com' }), /SIP_TRUNK_URI: sips: \(TLS\) is not supported/);
    const bad = problems({ SIP_TRUNK_URI: 'sip:trunk.example.com', SIP_PASSWORD: ' secret-pw ' });
    assert.match(bad, /SIP_PASSWORD/);
    assert.doesNotMatch(bad, /secret-pw/);
    assert.equal(problems({ SIP_TRUNK_URI: 'sip:trunk.example.com;transport=tcp', SIP_USERNAME: USER, SIP_PASSWORD: PASSWORD }), '');
  });

  it('refuses SIP_USERNAME without SIP_PASSWORD', () => {
    const context = recordingContext(null);
    assert.throws(
      () =>
        createSipProvider(
          sipTrunkSettings('sip:127.0.0.2', { SIP_USERNAME: USER, SIP_LOCAL_ADDRESS: '0.0.0.0' }),
          context,
        ),
      /SIP_USERNAME and SIP_PASSWORD go together/,
    );
  });
});

for (const transport of ['udp', 'tcp'] as const) {
  describe(`sip provider against SIPp over ${transport.toUpperCase()}`, { skip: missing ?? false }, () => {
    it('cancels at the 180 and counts the call delivered; SIPp gets the CANCEL and our ACK of its 487', async () => {
      const placed = await place('ring.xml', { transport }, { STATUS: '180', PHRASE: 'Ringing' });
      accepted(placed);
      sippPassed(placed);
      assert.equal(received(placed, 'CANCEL'), 1);
      assert.ok(received(placed, 'ACK') >= 1);
      assert.match(placed.messages, /^INVITE sip:\+2348012345678@127\.0\.0\.2:\d+ SIP\/2\.0/m, 'the Request-URI is the number at the trunk');
      assert.match(placed.messages, /^Content-Type: application\/sdp/m, 'the INVITE carries an SDP offer');
    });

    it('cancels at a 183 without a body', async () => {
      const placed = await place('ring.xml', { transport }, { STATUS: '183', PHRASE: 'Session Progress' });
      accepted(placed);
      sippPassed(placed);
    });

    it('cancels at a 183 with early media (SDP)', async () => {
      const placed = await place('early-media.xml', { transport });
      accepted(placed);
      sippPassed(placed);
    });

    it('hangs up an answered call at once: ACK then BYE, delivered', async () => {
      const placed = await place('answer.xml', { transport });
      accepted(placed);
      sippPassed(placed);
      assert.equal(received(placed, 'BYE'), 1);
      assert.equal(received(placed, 'CANCEL'), 0);
    });

    it('an answer that crosses our CANCEL (a 200 after it) is still ACKed and hung up with a BYE', async () => {
      const placed = await place('ring-answer.xml', { transport });
      accepted(placed);
      sippPassed(placed);
      assert.equal(received(placed, 'CANCEL'), 1);
      assert.equal(received(placed, 'BYE'), 1);
    });

    for (const [status, phrase, kind] of [
      ['486', 'Busy Here', 'permanent'],
      ['404', 'Not Found', 'permanent'],
      ['480', 'Temporarily Unavailable', 'permanent'],
      ['403', 'Forbidden', 'permanent'],
      ['603', 'Decline', 'permanent'],
      ['503', 'Service Unavailable', 'transient'],
      ['408', 'Request Timeout', 'transient'],
    ] as const) {
      it(`maps a ${status} before ringing to a ${kind} failure, ACKed`, async () => {
        const placed = await place('final.xml', { transport }, { STATUS: status, PHRASE: phrase });
        failed(placed, kind, new RegExp(`^trunk answered ${status} ${phrase}$`));
        sippPassed(placed);
      });
    }

    it('answers a 401 with digest credentials that SIPp verifies (qop=auth), then rings', async () => {
      const placed = await place('auth.xml', { transport }, { USER, PASSWORD });
      accepted(placed);
      sippPassed(placed);
      assert.equal(received(placed, 'INVITE'), 2);
      assertLogsHide(placed.lines, [PASSWORD, callerId]);
    });

    it('a wrong password is refused again and is a permanent failure', async () => {
      const placed = await place('auth.xml', { transport, credentials: { username: USER, password: 'not-the-password' } }, { USER, PASSWORD });
      failed(placed, 'permanent', /^credentials refused: trunk answered 401/);
      sippPassed(placed);
      assert.equal(received(placed, 'INVITE'), 2, 'one try with credentials, not more');
      assertLogsHide(placed.lines, ['not-the-password', PASSWORD]);
    });

    it('answers a 407 with Proxy-Authorization, a digest of the right password', async () => {
      const placed = await place('auth-proxy.xml', { transport }, { USER });
      accepted(placed);
      sippPassed(placed);
      const header = /^Proxy-Authorization: *(.*)$/m.exec(placed.messages)?.[1] ?? '';
      assert.ok(verifyDigest(header, 'INVITE', USER, PASSWORD), `the digest checks out with the password: ${header}`);
      assert.ok(!verifyDigest(header, 'INVITE', USER, 'other'), 'and not with another');
      assert.doesNotMatch(placed.messages, /^Authorization:/m);
    });

    it('a challenge without credentials set is a permanent failure naming the settings', async () => {
      const sipp = await startSipp('auth.xml', transport, { ...identityWords, USER, PASSWORD });
      const { provider: p } = provider(sipp.port, { transport, credentials: null });
      try {
        const result = await p.send(call, new AbortController().signal);
        assert.equal(result.kind, 'permanent');
        assert.match(result.kind === 'permanent' ? result.reason : '', /401.*SIP_USERNAME \/ SIP_PASSWORD are not set/);
      } finally {
        await p.stop();
        sipp.stop();
      }
    });

    it('never rings (100 only): CANCEL after the ring time, transient', async () => {
      const placed = await place('trying.xml', { transport });
      failed(placed, 'transient', /^no ringing within 1 s/);
      assert.ok(placed.ms >= RING_SECONDS * 1000 - 50 && placed.ms < RING_SECONDS * 1000 + 1_000, `${placed.ms} ms`);
      sippPassed(placed);
      assert.equal(received(placed, 'CANCEL'), 1);
    });

    it('no answer at all from the far end: transient within the ring time', async () => {
      const placed = await place('silent.xml', { transport }, { PAUSE: '1500' });
      failed(placed, 'transient', /^no answer from the trunk within 1 s/);
      assert.ok(placed.ms < RING_SECONDS * 1000 + 500, `${placed.ms} ms`);
      assert.equal(received(placed, 'CANCEL'), 0, 'no CANCEL before a provisional answer (RFC 3261 9.1)');
    });

    it('nothing listening: transient, within the ring time', async () => {
      const port = await freePort();
      const { provider: p } = provider(port, { transport });
      try {
        const started = performance.now();
        const result = await p.send(call, new AbortController().signal);
        const ms = performance.now() - started;
        assert.equal(result.kind, 'transient', JSON.stringify(result));
        assert.match(result.kind === 'transient' ? result.reason : '', transport === 'tcp' ? /ECONNREFUSED/ : /no answer from the trunk/);
        assert.ok(ms < RING_SECONDS * 1000 + 500, `${ms} ms`);
      } finally {
        await p.stop();
      }
    });

    it('the signal aborts a call that is trying: CANCEL and a transient result at once', async () => {
      const controller = new AbortController();
      const abortAt = 300;
      const sipp = await startSipp('trying.xml', transport, identityWords);
      // A ring time of 5 s: only the signal can end this call sooner.
      const { provider: p } = provider(sipp.port, { transport, ringSeconds: 5 });
      try {
        // Counted from the abort itself, not from the send: on a busy machine the timer itself fires late.
        let abortedAt = 0;
        setTimeout(() => {
          abortedAt = performance.now();
          controller.abort();
        }, abortAt);
        const result = await p.send(call, controller.signal);
        const ms = performance.now() - abortedAt;
        assert.equal(result.kind, 'transient', JSON.stringify(result));
        assert.match(result.kind === 'transient' ? result.reason : '', /timed out before the call rang/);
        assert.ok(abortedAt > 0 && ms < 1_000, `ended ${ms} ms after the signal, so by the 5 s ring time, not the signal`);
        assert.equal(await sipp.exited, 0, sipp.errors());
        assert.match(sipp.messages(), /^CANCEL /m);
      } finally {
        await p.stop();
        sipp.stop();
      }
    });
  });
}

/** An independent check of a digest answer (RFC 2617 section 3.2.2, MD5 with qop=auth) from its header's own parameters. */
function verifyDigest(header: string, method: string, username: string, password: string): boolean {
  const param = (name: string) => new RegExp(`(?:^|[ ,])${name}="?([^",]*)"?`).exec(header)?.[1] ?? '';
  const md5 = (s: string) => createHash('md5').update(s).digest('hex');
  if (param('username') !== username) return false;
  const ha1 = md5(`${username}:${param('realm')}:${password}`);
  const ha2 = md5(`${method}:${param('uri')}`);
  const expected = md5(`${ha1}:${param('nonce')}:${param('nc')}:${param('cnonce')}:${param('qop')}:${ha2}`);
  return param('response') === expected;
}
