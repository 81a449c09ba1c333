import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allows, isScope, knownScopes, parseScopeList, requiredScopes } from '../../src/domain/scopes.js';

describe('scopes (contract 2)', () => {
  it('knows the five seed scopes and CAMARA\'s (contract 15)', () => {
    assert.deepEqual([...knownScopes].sort(), ['deposit:request', 'lookup:request', 'lookup:status', 'one-time-password-sms:send-validate', 'otp:send', 'otp:verify']);
    assert.equal(isScope('otp:send'), true);
    assert.equal(isScope('OTP:SEND'), false);
    assert.equal(isScope('admin'), false);
  });

  it('names the scope each operation needs (contract 2 table)', () => {
    assert.deepEqual(requiredScopes, {
      createVerification: ['otp:send'],
      fetchVerification: ['otp:send', 'otp:verify'],
      verifyCode: ['otp:verify'],
      resendCode: ['otp:send'],
      cancelVerification: ['otp:send'],
      eraseVerification: ['otp:send'],
      requestLookup: ['lookup:request'],
      fetchLookup: ['lookup:status'],
      fetchStats: ['otp:send', 'otp:verify'],
      camaraSendValidate: ['one-time-password-sms:send-validate'],
    });
    assert.equal(allows(['otp:send'], 'createVerification'), true);
    assert.equal(allows(['otp:verify'], 'createVerification'), false);
    assert.equal(allows(['otp:verify'], 'fetchVerification'), true);
    assert.equal(allows(['otp:send'], 'fetchVerification'), true);
    assert.equal(allows(['lookup:status'], 'fetchVerification'), false);
    assert.equal(allows(['otp:send'], 'verifyCode'), false);
    assert.equal(allows([], 'verifyCode'), false);
    assert.equal(allows(['lookup:request'], 'requestLookup'), true);
    assert.equal(allows(['lookup:status'], 'requestLookup'), false);
    assert.equal(allows(['lookup:status'], 'fetchLookup'), true);
    assert.equal(allows(['lookup:request'], 'fetchLookup'), false);
    assert.equal(allows(['otp:verify'], 'fetchStats'), true);
    assert.equal(allows(['lookup:status'], 'fetchStats'), false);
  });

  it('splits a space-separated list, dropping repeats and setting unknown words apart', () => {
    assert.deepEqual(parseScopeList('otp:send  otp:verify otp:send'), { scopes: ['otp:send', 'otp:verify'], unknown: [] });
    assert.deepEqual(parseScopeList('otp:send admin'), { scopes: ['otp:send'], unknown: ['admin'] });
    assert.deepEqual(parseScopeList(''), { scopes: [], unknown: [] });
    assert.deepEqual(parseScopeList('otp:send\totp:verify'), { scopes: [], unknown: ['otp:send\totp:verify'] });
  });
});
