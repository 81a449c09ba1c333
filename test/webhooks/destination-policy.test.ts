import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { twilioSmsSettings } from '../support/provider-settings.js';
import { parseAllowedNetworks, noAllowedNetworks } from '../../src/webhooks/allowed-networks.js';
import { webhookDestinationProblem, type WebhookDestinations } from '../../src/webhooks/destination-policy.js';

const production = (allowed: string): WebhookDestinations => ({ allowPrivate: false, allowed: parseAllowedNetworks(allowed), httpsOnly: true });

describe('webhook destinations a create may name', () => {
  it('takes https anywhere public, and in production http only inside an allowed network', () => {
    const p = production('10.20.0.0/16, hooks.internal, .svc.cluster.local, fd00::/8');
    const ok = [
      'https://hooks.example.com/otp',
      'https://93.184.216.34/otp',
      'http://10.20.3.4:8080/otp',
      'https://10.20.3.4/otp',
      'http://hooks.internal/otp',
      'http://HOOKS.internal./otp',
      'http://receiver.team.svc.cluster.local/otp',
      'http://[fd00::5]/otp',
      'http://[::ffff:10.20.0.9]/otp',
    ];
    for (const url of ok) assert.equal(webhookDestinationProblem(url, p), null, url);
    const refused: [string, RegExp][] = [
      ['http://hooks.example.com/otp', /must use https: http is taken only for a destination inside the network WEBHOOK_ALLOWED_NETWORKS names/],
      ['http://93.184.216.34/otp', /must use https/],
      ['https://10.21.0.1/otp', /must not point to a private address \(10\.21\.0\.1\)/],
      ['https://[fe80::1]/otp', /link-local/],
      ['https://localhost/otp', /this machine \(localhost\)/],
      ['https://api.localhost/otp', /this machine/],
      ['https://127.0.0.1/otp', /loopback address \(127\.0\.0\.1\)/],
    ];
    for (const [url, issue] of refused) assert.match(webhookDestinationProblem(url, p) ?? '', issue, url);
    // A suffix names the names under it, not itself.
    assert.equal(webhookDestinationProblem('https://svc.cluster.local/otp', p), null, 'https to a name not listed: its addresses are checked when delivered');
    assert.match(webhookDestinationProblem('http://svc.cluster.local/otp', p) ?? '', /must use https/);
  });

  it('outside production takes http to public hosts, and anything with WEBHOOK_ALLOW_PRIVATE_NETWORKS', () => {
    const dev: WebhookDestinations = { allowPrivate: false, allowed: noAllowedNetworks, httpsOnly: false };
    assert.equal(webhookDestinationProblem('http://hooks.example.com/otp', dev), null);
    assert.match(webhookDestinationProblem('http://192.168.1.1/otp', dev) ?? '', /private address/);
    assert.equal(webhookDestinationProblem('http://127.0.0.1:3000/otp', { ...dev, allowPrivate: true }), null);
    assert.match(webhookDestinationProblem('gopher://x/', { ...dev, allowPrivate: true }) ?? '', /http or https/);
  });
});

describe('WEBHOOK_ALLOWED_NETWORKS and WEBHOOK_ALLOW_PRIVATE_NETWORKS settings', () => {
  const prod = { NODE_ENV: 'production', DATABASE_URL: 'postgres://db.example/otp', ...twilioSmsSettings };

  it('parses ranges and names, and names an entry that is neither', () => {
    const parsed = loadConfig({ WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8, 192.168.7.7, fd00::/8, hooks.internal, .svc.cluster.local' }).WEBHOOK_ALLOWED_NETWORKS;
    assert.deepEqual({ ranges: parsed.ranges.map((r) => r.bits), names: parsed.names, suffixes: parsed.suffixes }, {
      ranges: [8, 32, 8],
      names: ['hooks.internal'],
      suffixes: ['.svc.cluster.local'],
    });
    assert.throws(() => loadConfig({ WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/33' }), /WEBHOOK_ALLOWED_NETWORKS: "10\.0\.0\.0\/33" is not a CIDR range/);
    assert.throws(() => loadConfig({ WEBHOOK_ALLOWED_NETWORKS: 'hooks internal' }), /"hooks internal" is neither a CIDR range/);
    assert.throws(() => loadConfig({ WEBHOOK_ALLOWED_NETWORKS: 'http://hooks.internal' }), /neither a CIDR range/);
  });

  it('refuses WEBHOOK_ALLOW_PRIVATE_NETWORKS in production, naming the narrower setting', () => {
    assert.throws(() => loadConfig({ ...prod, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }), /WEBHOOK_ALLOW_PRIVATE_NETWORKS: true is refused with NODE_ENV=production.*WEBHOOK_ALLOWED_NETWORKS/);
    assert.equal(loadConfig({ ...prod, WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8' }).WEBHOOK_ALLOWED_NETWORKS.ranges.length, 1);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }).WEBHOOK_ALLOW_PRIVATE_NETWORKS, true, 'development keeps it');
  });
});
