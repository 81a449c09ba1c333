import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AddressGuard, type LookupAll } from '../../src/webhooks/address-guard.js';
import { nonPublicReason } from '../../src/webhooks/ip-ranges.js';
import { GuardedHttpClient } from '../../src/webhooks/guarded-client.js';
import { startReceiver, type Receiver } from './helpers.js';

/** There is no DNS here: names resolve through this table only. */
const table: Record<string, { address: string; family: 4 | 6 }[]> = {
  'loopback.test': [{ address: '127.0.0.1', family: 4 }],
  'mixed.test': [
    { address: '93.184.216.34', family: 4 },
    { address: '10.1.2.3', family: 4 },
  ],
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
  'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'public.test': [{ address: '93.184.216.34', family: 4 }],
  localhost: [{ address: '127.0.0.1', family: 4 }],
};
const lookups: string[] = [];
const lookup: LookupAll = async (hostname) => {
  lookups.push(hostname);
  const found = table[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
};

describe('address guard: what is not public', () => {
  const refused = [
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['10.0.0.1', /private/],
    ['172.16.5.4', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['169.254.169.254', /link-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.255', /carrier-grade NAT/],
    ['0.0.0.0', /this network/],
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['240.0.0.1', /reserved/],
    ['255.255.255.255', /reserved/],
    ['192.0.2.10', /documentation/],
    ['198.18.0.1', /benchmarking/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['::ffff:127.0.0.1', /loopback.*IPv4-mapped/],
    ['::ffff:7f00:1', /loopback.*IPv4-mapped/],
    ['::ffff:10.0.0.1', /private.*IPv4-mapped/],
    ['::ffff:169.254.169.254', /link-local/],
    ['::127.0.0.1', /loopback.*IPv4-compatible/],
    ['64:ff9b::7f00:1', /loopback.*NAT64/],
    ['2002:7f00:1::', /loopback.*6to4/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['fc00::1', /unique local/],
    ['fd12:3456::1', /unique local/],
    ['fec0::1', /site-local/],
    ['ff02::1', /multicast/],
    ['2001:db8::1', /documentation/],
    ['2001::1', /reserved/],
    ['100::1', /reserved/],
    ['4000::1', /reserved/],
  ] as const;
  for (const [address, reason] of refused) {
    it(`refuses ${address}`, () => assert.match(nonPublicReason(address) ?? 'public', reason));
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '2002:808:808::1']) {
    it(`allows ${address}`, () => assert.equal(nonPublicReason(address), null));
  }
  it('says a non-address is none', () => assert.equal(nonPublicReason('example.com'), 'not an IP address'));
});

describe('address guard: names', () => {
  const guard = new AddressGuard(false, lookup);
  it('refuses localhost names without asking DNS', async () => {
    lookups.length = 0;
    for (const name of ['localhost', 'LOCALHOST.', 'api.localhost']) {
      const r = await guard.check(name);
      assert.equal(r.ok, false);
    }
    assert.deepEqual(lookups, []);
  });
  it('checks every address a name resolves to', async () => {
    const r = await guard.check('mixed.test');
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.reason, /mixed\.test resolves to 10\.1\.2\.3 is a private address/);
  });
  it('passes a public name with its addresses', async () => {
    assert.deepEqual(await guard.check('public.test'), { ok: true, addresses: table['public.test'] });
  });
  it('checks bracketed IPv6 literals without DNS', async () => {
    lookups.length = 0;
    assert.equal((await guard.check('[::1]')).ok, false);
    assert.deepEqual(lookups, []);
  });
  it('lets everything through when private networks are allowed', async () => {
    assert.equal((await new AddressGuard(true, lookup).check('loopback.test')).ok, true);
    assert.equal((await new AddressGuard(true, lookup).check('localhost')).ok, true);
  });
});

describe('guarded HTTP client: SSRF refused (WEBHOOK_ALLOW_PRIVATE_NETWORKS off)', () => {
  let receiver: Receiver;
  let client: GuardedHttpClient;
  before(async () => {
    receiver = await startReceiver();
    client = new GuardedHttpClient({ timeoutMs: 2000, allowPrivateNetworks: false, lookup });
  });
  after(async () => {
    await client.close();
    await receiver.close();
  });

  const cases = (port: () => number) =>
    [
      [`http://127.0.0.1:${port()}/hooks`, /127\.0\.0\.1 is a loopback address/],
      [`http://localhost:${port()}/hooks`, /localhost is a loopback name/],
      [`http://[::1]:${port()}/hooks`, /::1 is a loopback address/],
      ['http://10.0.0.1/hooks', /10\.0\.0\.1 is a private address/],
      ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address/],
      [`http://[::ffff:127.0.0.1]:${port()}/hooks`, /loopback address \(IPv4-mapped\)/],
      [`http://loopback.test:${port()}/hooks`, /loopback\.test resolves to 127\.0\.0\.1 is a loopback address/],
      [`http://mapped.test:${port()}/hooks`, /mapped\.test resolves to ::ffff:127\.0\.0\.1/],
      ['http://metadata.test/computeMetadata/v1/', /link-local/],
      [`http://mixed.test:${port()}/`, /10\.1\.2\.3 is a private address/],
      [`http://2130706433:${port()}/hooks`, /127\.0\.0\.1 is a loopback address/],
      [`http://0x7f.1:${port()}/hooks`, /127\.0\.0\.1 is a loopback address/],
      [`https://127.0.0.1:${port()}/hooks`, /loopback/],
    ] as const;

  it('refuses each case before connecting, and nothing reaches the receiver', async () => {
    for (const [url, reason] of cases(() => receiver.port)) {
      const r = await client.post({ url, headers: {}, body: '{}' });
      assert.equal(r.kind, 'error', url);
      assert.match(r.kind === 'error' ? r.error : '', /^destination refused: /, url);
      assert.match(r.kind === 'error' ? r.error : '', reason, url);
    }
    assert.equal(receiver.requests.length, 0);
  });

  it('refuses URLs that are not http(s) or carry credentials', async () => {
    for (const url of ['ftp://example.com/x', 'http://user:pw@public.test/', 'not a url']) {
      const r = await client.post({ url, headers: {}, body: '{}' });
      assert.equal(r.kind, 'error', url);
    }
  });

  it('connects to the address the name was checked at (allowed network), with the name as Host', async () => {
    const allowing = new GuardedHttpClient({ timeoutMs: 2000, allowPrivateNetworks: true, lookup });
    try {
      const r = await allowing.post({ url: `http://loopback.test:${receiver.port}/named`, headers: {}, body: '{}' });
      assert.equal(r.kind, 'response');
      assert.equal(r.kind === 'response' ? r.status : 0, 204);
      const got = receiver.requests.at(-1);
      assert.equal(got?.url, '/named');
      assert.equal(got?.headers.host, `loopback.test:${receiver.port}`);
    } finally {
      await allowing.close();
    }
  });

  it('reports a name that does not resolve as an error', async () => {
    const r = await client.post({ url: 'http://nowhere.test/', headers: {}, body: '{}' });
    assert.equal(r.kind, 'error');
    assert.match(r.kind === 'error' ? r.error : '', /ENOTFOUND/);
  });
});
