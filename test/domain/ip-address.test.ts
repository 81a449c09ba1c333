import assert from 'node:assert/strict';
import { it } from 'node:test';
import { canonicalAddress } from '../../src/domain/ip-address.js';

/** Contract 14: addresses are compared as addresses, whatever their spelling. */
it('gives every spelling of one address one text, and its /24 or /48', () => {
  const same = (texts: readonly string[], address: string, network: string) => {
    for (const t of texts) assert.deepEqual(canonicalAddress(t), { address, network }, t);
  };
  same(['192.0.2.1', '::ffff:192.0.2.1', '::FFFF:c000:201', '0:0:0:0:0:ffff:192.0.2.1', '::ffff:c000:0201'], '192.0.2.1', '192.0.2.0/24');
  same(['2001:db8::1', '2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8:0:0:0::1', 'fe80::1%eth0'.replace('fe80', '2001:db8').replace('%eth0', '')], '2001:db8::1', '2001:db8::/48');
  same(['2001:db8:0:0:1:0:0:1'], '2001:db8::1:0:0:1', '2001:db8::/48');
  same(['2001:db8:abcd:12:0:0:0:1'], '2001:db8:abcd:12::1', '2001:db8:abcd::/48');
  same(['fe80::1%eth0'], 'fe80::1', 'fe80::/48');
  same(['::'], '::', '::/48');
  // An IPv4-compatible (not mapped) address is an IPv6 address.
  same(['::192.0.2.1'], '::c000:201', '::/48');
});

it('refuses what is not IPv4 or IPv6 text', () => {
  for (const t of ['', '1.2.3', '256.1.1.1', '01.2.3.4', '1.2.3.4.5', '2001:db8::g', '1::2::3', 'example.com', ' 1.2.3.4', '[::1]']) {
    assert.equal(canonicalAddress(t), null, t);
  }
});
