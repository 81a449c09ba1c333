import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cryptoRandom, uuidV7 } from '../../src/domain/random.js';
import { isUuid } from '../../src/store/uuid.js';

/** Ids of new rows (RFC 9562 version 7): time first, so they sort as they were made; the rest random. */
describe('uuidV7', () => {
  it('lays out the time, the version and the variant as RFC 9562 does', () => {
    // RFC 9562 appendix A.6: 2022-02-22 14:22:22 at UTC-5 (0x017F22E279B0) with its random bits (the first six
    // bytes make way for the time; the high bits of bytes 6 and 8 for the version and the variant).
    const random = Buffer.from('ffffffffffff0cc318c4dc0c0c07398f', 'hex');
    const ms = Date.parse('2022-02-22T19:22:22Z');
    assert.equal(ms, 0x017f22e279b0);
    assert.equal(uuidV7(ms, random), '017f22e2-79b0-7cc3-98c4-dc0c0c07398f');
  });

  it('keeps the random bits it is given, all but the six of version and variant', () => {
    const ones = uuidV7(0, Buffer.alloc(16, 0xff));
    assert.equal(ones, '00000000-0000-7fff-bfff-ffffffffffff');
    const zeros = uuidV7(0, Buffer.alloc(16, 0));
    assert.equal(zeros, '00000000-0000-7000-8000-000000000000');
  });

  it('makes ids the service accepts, in the order they were made across milliseconds', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(cryptoRandom.uuid());
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    for (const id of ids) {
      assert.ok(isUuid(id), id);
      assert.equal(id[14], '7');
      assert.match(id[19] ?? '', /[89ab]/);
    }
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
  });
});
