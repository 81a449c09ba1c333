/**
 * Twilio-shaped sids (contract 15): a two-letter prefix and the 32 hex digits of one of our UUIDs, so that a sid
 * names the same verification or client as its id does, with nothing stored beside it.
 */
export type SidPrefix = 'AC' | 'VA' | 'VE';

export function sidOf(prefix: SidPrefix, uuid: string): string {
  return prefix + uuid.replace(/-/g, '');
}

/** The UUID a sid of this prefix names; null when it is not one (answered like an unknown sid). */
export function uuidOfSid(prefix: SidPrefix, sid: string): string | null {
  const match = new RegExp(`^${prefix}([0-9a-fA-F]{32})$`).exec(sid);
  if (!match?.[1]) return null;
  const hex = match[1].toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A client named as Twilio's user names an account: its id, or its account sid (`AC` + the id's hex digits). */
export function clientIdOfUser(user: string): string {
  return uuidOfSid('AC', user) ?? user;
}
