const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True for a lower-case hyphenated UUID; anything else would make PostgreSQL's uuid cast fail. */
export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}
