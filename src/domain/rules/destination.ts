import { countryRefused, lineTypeRefused } from '../destination-rules.js';
import { sendRule } from './send-rule.js';

/** ALLOWED_COUNTRIES and the client's own countries (contract 10): a create's number, before anything is counted. */
export const countriesRule = sendRule({
  rule: 'countries',
  screen(s, j, d) {
    if (s.kind !== 'create') return null;
    const detail = countryRefused(s.phone, d.policy.destinations, s.settings?.allowedCountries ?? null);
    return detail !== null && j.refuses('countries') ? { kind: 'not-allowed', rule: 'destination', detail } : null;
  },
});

/** BLOCKED_LINE_TYPES (contract 10). */
export const lineTypesRule = sendRule({
  rule: 'line-types',
  screen(s, j, d) {
    if (s.kind !== 'create') return null;
    const detail = lineTypeRefused(s.phone, d.policy.destinations);
    return detail !== null && j.refuses('line-types') ? { kind: 'not-allowed', rule: 'destination', detail } : null;
  },
});
