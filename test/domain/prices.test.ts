import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePriceSheet } from '../../src/admin/price-commands.js';
import { largest, parseAmount, per, sum } from '../../src/domain/money.js';
import { costOf, PriceTable, type Price } from '../../src/domain/prices.js';

const price = (provider: string, destination: string, amount: string, channel: Price['channel'] = 'sms'): Price => ({ provider, channel, destination, currency: 'USD', price: amount });
const to = (phoneNumber: string, regionCode: string | null) => ({ phoneNumber, regionCode });

describe('prices', () => {
  const table = new PriceTable([
    price('smpp', 'NG', '0.0031'),
    price('smpp', '+23480', '0.0025'),
    price('smpp', '+2348031', '0.002'),
    price('twilio', 'default', '0.0079'),
    price('twilio', 'NG', '0.0306'),
    price('twilio', 'default', '0.05', 'voice'),
  ]);

  it("prices a send by its provider and channel: the longest matching prefix, then the country, then default, else nothing", () => {
    assert.deepEqual(table.priceOf('smpp', 'sms', to('+2348031234567', 'NG')), { amount: '0.002', currency: 'USD' });
    assert.deepEqual(table.priceOf('smpp', 'sms', to('+2348051234567', 'NG')), { amount: '0.0025', currency: 'USD' });
    assert.deepEqual(table.priceOf('smpp', 'sms', to('+2349051234567', 'NG')), { amount: '0.0031', currency: 'USD' });
    assert.equal(table.priceOf('smpp', 'sms', to('+233241234567', 'GH')), null, 'no default for smpp');
    assert.deepEqual(table.priceOf('twilio', 'sms', to('+233241234567', 'GH')), { amount: '0.0079', currency: 'USD' });
    assert.deepEqual(table.priceOf('twilio', 'sms', to('+2348031234567', 'NG')), { amount: '0.0306', currency: 'USD' });
    assert.equal(table.priceOf('twilio', 'whatsapp', to('+2348031234567', 'NG')), null, 'one channel never prices another');
    assert.equal(table.priceOf('smpp', 'sms', to('+2348031234567', null))?.amount, '0.002', 'a number of unknown country still takes its prefix');
  });

  it("knows each channel's highest price, 0 for a channel without one", () => {
    assert.equal(table.highestOf('sms'), '0.0306');
    assert.equal(table.highestOf('voice'), '0.05');
    assert.equal(table.highestOf('call'), '0');
  });

  it("costs a send at its provider's reported price in the deployment's currency, else at the imported one", () => {
    const imported = { amount: '0.0079', currency: 'USD' };
    assert.deepEqual(costOf({ amount: '0.0081', currency: 'USD' }, imported, 'USD'), { cost: '0.0081', reported: { amount: '0.0081', currency: 'USD' } });
    assert.deepEqual(costOf({ amount: '0.72', currency: 'KES' }, imported, 'USD'), { cost: '0.0079', reported: { amount: '0.72', currency: 'KES' } }, 'another currency is kept, never summed');
    assert.deepEqual(costOf(null, null, 'USD'), { cost: null, reported: null });
    assert.deepEqual(costOf({ amount: '0', currency: 'XXX' }, imported, 'USD'), { cost: '0', reported: { amount: '0', currency: 'XXX' } }, 'nothing is nothing in any currency');
    assert.deepEqual(costOf(null, { amount: '4.5', currency: 'NGN' }, 'USD'), { cost: null, reported: null }, 'a price in another currency is no cost');
  });
});

describe('money', () => {
  it('reads decimal amounts exactly and writes them without trailing zeros', () => {
    assert.equal(parseAmount(' 0.03330000 '), '0.0333');
    assert.equal(parseAmount('12'), '12');
    assert.equal(parseAmount('0.0000000001'), '0.0000000001');
    for (const bad of ['-1', '1e-3', '0.00000000001', '.5', '1.', 'one', '', '1,5', '1234567890123']) assert.equal(parseAmount(bad), null, bad);
  });

  it('sums exactly, and divides to 6 decimals rounding half up', () => {
    assert.equal(sum(['0.1', '0.2']), '0.3');
    assert.equal(sum([]), '0');
    assert.equal(sum(Array.from({ length: 1000 }, () => '0.0031')), '3.1');
    assert.equal(per('1', 3), '0.333333');
    assert.equal(per('2', 3), '0.666667');
    assert.equal(per('1', 0), null);
    assert.equal(largest(['0.5', '0.05', '0.0306']), '0.5');
    assert.equal(largest([]), '0');
  });
});

describe('price sheets', () => {
  const deps = { currency: 'USD', knownProvider: (name: string) => ['smpp', 'twilio'].includes(name) };

  it('reads a sheet as spreadsheets write it: a byte order mark, CRLF, quotes, spaces and any case', () => {
    const sheet = parsePriceSheet('\ufeffProvider, Channel ,destination,CURRENCY,price\r\n"SMPP",sms,ng,usd," 0.0031 "\r\n\r\ntwilio,SMS,+234 80,USD,0.0025\r\n', deps);
    assert.deepEqual(sheet, {
      prices: [
        { provider: 'smpp', channel: 'sms', destination: 'NG', currency: 'USD', price: '0.0031' },
        { provider: 'twilio', channel: 'sms', destination: '+23480', currency: 'USD', price: '0.0025' },
      ],
    });
  });

  it('names each wrong line by its line in the file, and a broken CSV as such', () => {
    const sheet = parsePriceSheet('provider,channel,destination,currency,price\n\nsmpp,sms,NG,USD,0.1\n\ntwilio,sms,XX,USD,0.1\n', deps);
    assert.deepEqual(sheet, { problems: ['line 5: the destination is a country (NG), + and the start of a number (+23480) or default, not "XX"'] });
    const broken = parsePriceSheet('provider,channel,destination,currency,price\nsmpp,sms,"NG,USD,0.1\n', deps);
    assert.ok('problems' in broken && broken.problems[0]?.startsWith('not a CSV file: '));
  });
});
