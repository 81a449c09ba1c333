import { sendRule } from './send-rule.js';

/** The operator's block lists (contract 14): a create's number, or a prefix it falls under. */
export const listsRule = sendRule({
  rule: 'lists',
  screen(s, j, d) {
    if (s.kind !== 'create') return null;
    const blocked = d.lists?.().blockedBy(s.phone.e164, s.clientId) ?? null;
    return blocked !== null && j.refuses('lists') ? { kind: 'blocked', value: blocked } : null;
  },
});
