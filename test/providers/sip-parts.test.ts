import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerChallenge, parseChallenge, pickChallenge } from '../../src/providers/sip/digest.js';
import { cseqOf, firstHeader, headerValues, parseMessage, splitList, topBranch } from '../../src/providers/sip/message.js';
import { parseLocalAddress, parseSipHost, parseTrunkUri, sipSettings } from '../../src/providers/sip/settings.js';
import { finalFailure } from '../../src/providers/sip/status.js';
import { StreamFramer } from '../../src/providers/sip/stream-framer.js';

describe('SIP_TRUNK_URI', () => {
  it('reads host, port and transport, UDP and 5060 by default', () => {
    assert.deepEqual(parseTrunkUri('sip:trunk.example.com'), { host: 'trunk.example.com', port: 5060, transport: 'udp' });
    assert.deepEqual(parseTrunkUri('sip:10.0.0.7:5080;transport=tcp'), { host: '10.0.0.7', port: 5080, transport: 'tcp' });
    assert.deepEqual(parseTrunkUri('sip:[2001:db8::1]:5062;transport=UDP'), { host: '2001:db8::1', port: 5062, transport: 'udp' });
  });

  it('refuses what it cannot place calls through, saying why', () => {
    assert.throws(() => parseTrunkUri('sips:trunk.example.com'), /sips: \(TLS\) is not supported/);
    assert.throws(() => parseTrunkUri('sip:user:pw@trunk.example.com'), /without a user part/);
    assert.throws(() => parseTrunkUri('http://trunk.example.com'), /expected sip:host\[:port\]/);
    assert.throws(() => parseTrunkUri('sip:trunk.example.com:70000'), /port from 1 to 65535/);
    assert.throws(() => parseTrunkUri('sip:trunk.example.com;transport=tls'), /transport must be udp or tcp/);
    assert.throws(() => parseTrunkUri('sip:trunk.example.com;lr'), /unknown URI parameter "lr"/);
    assert.throws(() => parseTrunkUri('sip:bad_host!'), /expected/);
  });

  it('the other settings check their values', () => {
    assert.equal(parseLocalAddress('192.0.2.10'), '192.0.2.10');
    assert.throws(() => parseLocalAddress('myhost'), /IP address of this machine/);
    assert.equal(parseSipHost('voice.example.com'), 'voice.example.com');
    assert.throws(() => parseSipHost('a b'), /host name or an IP address/);
    assert.equal(sipSettings.SIP_LOCAL_PORT.parse('0'), 0);
    assert.throws(() => sipSettings.SIP_LOCAL_PORT.parse('65536'), /port from 0 to 65535/);
    assert.throws(() => sipSettings.SIP_USERNAME.parse('a user'), /SIP user name/);
    assert.equal(sipSettings.SIP_PASSWORD.secret, true);
    assert.throws(() => sipSettings.SIP_PASSWORD.parse(' pw'), (err: Error) => !err.message.includes(' pw') && /printable ASCII/.test(err.message));
    assert.equal(sipSettings.SIP_NUMBER_FORMAT.parse('digits'), 'digits');
    assert.throws(() => sipSettings.SIP_NUMBER_FORMAT.parse('national'), /e164, digits/);
  });
});

describe('digest authentication', () => {
  // RFC 2617 section 3.5: the method and URI are the example's, the arithmetic is the same for SIP.
  const rfc2617 = 'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"';

  it('answers the RFC 2617 example as the RFC does', () => {
    const challenge = parseChallenge(rfc2617);
    assert.ok(challenge);
    const header = answerChallenge(challenge, { username: 'Mufasa', password: 'Circle Of Life' }, 'GET', '/dir/index.html', '0a4f113b');
    assert.match(header, /response="6629fae49393a05397450978507c4ef1"/);
    assert.match(header, /qop=auth, nc=00000001, cnonce="0a4f113b"/);
    assert.match(header, /opaque="5ccc069c403ebaf9f0171e9517f40e41"/);
  });

  it('answers the RFC 7616 SHA-256 example, and prefers SHA-256 when both are offered', () => {
    const sha = 'Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"';
    const md5 = sha.replace('algorithm=SHA-256', 'algorithm=MD5');
    const picked = pickChallenge([md5, sha]);
    assert.equal(picked?.algorithm, 'SHA-256');
    assert.ok(picked);
    const creds = { username: 'Mufasa', password: 'Circle of Life' };
    const cnonce = 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ';
    assert.match(answerChallenge(picked, creds, 'GET', '/dir/index.html', cnonce), /response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"/);
    const md5Challenge = parseChallenge(md5);
    assert.ok(md5Challenge);
    assert.match(answerChallenge(md5Challenge, creds, 'GET', '/dir/index.html', cnonce), /response="8ca523f5e9506fed4657c9700eebdbec"/);
  });

  it('answers a challenge without qop in the RFC 2069 form', () => {
    const challenge = parseChallenge('Digest realm="r", nonce="n"');
    assert.ok(challenge);
    const header = answerChallenge(challenge, { username: 'u', password: 'p' }, 'INVITE', 'sip:+1@h');
    assert.doesNotMatch(header, /qop=|cnonce=|nc=/);
  });

  it('declines what it cannot answer: another scheme, another algorithm, auth-int only', () => {
    assert.equal(parseChallenge('Basic realm="r"'), null);
    assert.equal(parseChallenge('Digest realm="r", nonce="n", algorithm=AKAv1-MD5'), null);
    assert.equal(parseChallenge('Digest realm="r", nonce="n", qop="auth-int"'), null);
    assert.equal(parseChallenge('Digest realm="r"'), null);
  });
});

describe('SIP messages', () => {
  const response = Buffer.from(
    [
      'SIP/2.0 180 Ringing',
      'v: SIP/2.0/UDP 127.0.0.1:5060;rport=5060;branch=z9hG4bKabc, SIP/2.0/UDP 10.0.0.1;branch=z9hG4bKdef',
      'From: <sip:+1@h>;tag=1',
      'To: "Bob, Jr." <sip:+2@h>;tag=2',
      'Record-Route: <sip:p1;lr>, <sip:p2;lr>',
      'Record-Route: <sip:p3;lr>',
      'CSeq: 2 INVITE',
      'Subject: folded',
      ' across lines',
      'l: 3',
      '',
      'abcdef',
    ].join('\r\n'),
  );

  it('reads compact forms, lists, folded lines and the body by its length', () => {
    const m = parseMessage(response);
    assert.ok(m && m.kind === 'response');
    assert.equal(m.status, 180);
    assert.equal(topBranch(m), 'z9hG4bKabc');
    assert.deepEqual(cseqOf(m), { seq: 2, method: 'INVITE' });
    assert.deepEqual(headerValues(m, 'record-route'), ['<sip:p1;lr>', '<sip:p2;lr>', '<sip:p3;lr>']);
    assert.equal(firstHeader(m, 'to'), '"Bob, Jr." <sip:+2@h>;tag=2');
    assert.equal(firstHeader(m, 'subject'), 'folded across lines');
    assert.equal(m.body, 'abc');
  });

  it('is null for what is not SIP', () => {
    assert.equal(parseMessage(Buffer.from('HTTP/1.1 200 OK\r\n\r\n')), null);
    assert.equal(parseMessage(Buffer.from('garbage')), null);
    assert.equal(parseMessage(Buffer.alloc(70_000, 0x41)), null);
  });

  it('splits lists outside quotes and angle brackets only', () => {
    assert.deepEqual(splitList('a, "b,c" <sip:x>, <sip:d,e>'), ['a', '"b,c" <sip:x>', '<sip:d,e>']);
  });

  it('frames a TCP stream by Content-Length, across chunks, skipping keep-alive CRLFs', () => {
    const seen: string[] = [];
    const framer = new StreamFramer((m) => seen.push(m.toString()));
    const one = 'SIP/2.0 100 Trying\r\nContent-Length: 0\r\n\r\n';
    const two = 'SIP/2.0 200 OK\r\nContent-Length: 4\r\n\r\nv=0\n';
    const stream = Buffer.from(`\r\n\r\n${one}${two}`);
    for (let i = 0; i < stream.length; i += 7) assert.equal(framer.push(stream.subarray(i, i + 7)), 'ok');
    assert.deepEqual(seen, [one, two]);
    assert.equal(new StreamFramer(() => undefined).push(Buffer.from(`SIP/2.0 200 OK\r\nContent-Length: 999999\r\n\r\n`)), 'overflow');
  });
});

describe('final answers before ringing', () => {
  it('are permanent for a refused, busy or unknown number, transient for a trunk in trouble', () => {
    for (const status of [404, 403, 410, 480, 484, 486, 488, 501, 600, 603, 604, 302]) assert.equal(finalFailure(status, 'x', null).kind, 'permanent', String(status));
    for (const status of [408, 491, 500, 502, 503, 504]) assert.equal(finalFailure(status, 'x', null).kind, 'transient', String(status));
  });

  it('carry the status and phrase, made safe, and a Retry-After', () => {
    assert.deepEqual(finalFailure(503, 'Service\r\nUnavailable', '120;duration=60'), {
      kind: 'transient',
      reason: 'trunk answered 503 Service??Unavailable',
      retryAfterSeconds: 120,
    });
  });
});
