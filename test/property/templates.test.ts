import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { checkTemplate, defaultClientSettings, renderSms, type ClientSettings } from '../../src/domain/client-settings.js';

/** Text with placeholders, braces, unicode and GSM extension characters mixed in. */
const templateText = fc
  .array(
    fc.oneof(
      fc.constantFrom('{code}', '{minutes}', '{app}', '{', '}', '{x}', '{{code}}', '€', '^', '\n', 'é', '日本', '😀'),
      fc.string({ maxLength: 40 }),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

const settings: fc.Arbitrary<ClientSettings> = fc.record({
  appName: fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: null }),
  webotpDomain: fc.option(fc.constantFrom('example.com', 'login.example.org'), { nil: null }),
  androidAppHash: fc.option(fc.constant('FA+9qCX9VSu'), { nil: null }),
}).map((s) => ({ ...defaultClientSettings, ...s }));

describe('SMS templates (property)', () => {
  it('any template that passes the check renders for any code and lifetime, holding the code, and never throws', () => {
    fc.assert(
      fc.property(templateText, settings, fc.stringMatching(/^\d{4,10}$/), fc.integer({ min: 10, max: 86_400 }), (template, s, code, seconds) => {
        const checked = checkTemplate(template, s, 10, seconds);
        if (!checked.ok) return;
        const text = renderSms({ ...s, templates: { fr: template } }, 'fr', { code, seconds });
        assert.ok(text.includes(code));
      }),
      { numRuns: 500 },
    );
  });

  it('a template without {code}, or with an unknown placeholder, never passes', () => {
    fc.assert(
      fc.property(templateText, settings, (template, s) => {
        const checked = checkTemplate(template, s, 6, 600);
        if (!template.includes('{code}')) assert.equal(checked.ok, false);
        if (/\{(?!code\}|minutes\}|app\})[^{}]*\}/.test(template)) assert.equal(checked.ok, false);
      }),
      { numRuns: 500 },
    );
  });
});
