import assert from 'node:assert/strict';
import { it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { spokenDigits, voiceLanguage, voiceSentence } from '../../src/domain/spoken-code.js';
import { twilioSmsSettings } from '../support/provider-settings.js';

/** Contract 13: VOICE_PROVIDER follows CALL_PROVIDER (default log in development only, refused in production). */
it('offers VOICE_CALL through log in development, and not beside a real provider unless named', () => {
  const voice = (env: Record<string, string>) => loadConfig({ DATA_DIR: 'memory://', ...env }).providers.voice.map((p) => p.module.name);
  assert.deepEqual(voice({}), ['log']);
  assert.deepEqual(voice(twilioSmsSettings), [], 'a channel nobody named is off beside a real provider');
  assert.deepEqual(voice({ ...twilioSmsSettings, VOICE_PROVIDER: 'log' }), ['log']);
  assert.deepEqual(voice({ ...twilioSmsSettings, VOICE_PROVIDER: 'twilio' }), ['twilio']);
  assert.throws(() => loadConfig({ DATA_DIR: 'memory://', VOICE_PROVIDER: 'smpp' }), /VOICE_PROVIDER: unknown provider "smpp"; expected one of log/);
  assert.equal(loadConfig({ DATA_DIR: 'memory://', ...twilioSmsSettings, VOICE_PROVIDER: 'log' }).devInbox, false, 'the inbox stays off beside twilio');
});

it('refuses log as VOICE_PROVIDER with NODE_ENV=production', () => {
  const prod = { NODE_ENV: 'production', DATABASE_URL: 'postgres://db.example/otp', ...twilioSmsSettings };
  assert.throws(() => loadConfig({ ...prod, VOICE_PROVIDER: 'log' }), /VOICE_PROVIDER: log sends nothing/);
  assert.deepEqual(loadConfig(prod).providers.voice, []);
});

it('reads VOICE_CALLER_NUMBER as E.164 and VOICE_REPEAT from 1 to 5 (default 3)', () => {
  const base = { DATA_DIR: 'memory://' };
  assert.equal(loadConfig(base).VOICE_REPEAT, 3);
  assert.equal(loadConfig(base).VOICE_CALLER_NUMBER, undefined, 'unset: SMS_SENDER_NUMBER is used');
  assert.equal(loadConfig({ ...base, VOICE_CALLER_NUMBER: '+2349010000555' }).VOICE_CALLER_NUMBER, '+2349010000555');
  assert.throws(() => loadConfig({ ...base, VOICE_CALLER_NUMBER: '09010000555' }), /VOICE_CALLER_NUMBER: expected a valid E.164 number/);
  assert.throws(() => loadConfig({ ...base, VOICE_REPEAT: '0' }), /VOICE_REPEAT/);
});

it('reads the digits one by one, never run together, in the locale\'s language where there is a sentence for it', () => {
  assert.equal(spokenDigits('412907'), '4, 1, 2, 9, 0, 7');
  assert.equal(voiceSentence('en', '412907'), 'Your code is 4, 1, 2, 9, 0, 7.');
  assert.equal(voiceSentence(voiceLanguage('fr-CA'), '0042'), 'Votre code est 0, 0, 4, 2.');
  assert.equal(voiceLanguage('fr-CA'), 'fr-CA');
  assert.equal(voiceLanguage('ja'), 'en', 'a language without a sentence is spoken in English');
  assert.equal(voiceLanguage(null), 'en');
});
