/** Scopes a client can be registered for and ask for (seed section 1). */
export const knownScopes = [
  'otp:send',
  'otp:verify',
  'lookup:request',
  'lookup:status',
  'deposit:request',
  // CAMARA's one-time-password-sms API (contract 15): send-code and validate-code.
  'one-time-password-sms:send-validate',
] as const;
export type Scope = (typeof knownScopes)[number];

export function isScope(value: string): value is Scope {
  return (knownScopes as readonly string[]).includes(value);
}

/** The scopes that let a token call each operation: any one of them is enough. */
export const requiredScopes = {
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
} as const satisfies Record<string, readonly Scope[]>;

export type Operation = keyof typeof requiredScopes;

export function allows(granted: readonly string[], operation: Operation): boolean {
  return requiredScopes[operation].some((s) => granted.includes(s));
}

/** Splits a space-separated scope string; unknown scopes are returned apart so the caller can refuse them. */
export function parseScopeList(raw: string): { scopes: Scope[]; unknown: string[] } {
  const words = [...new Set(raw.split(' ').filter((w) => w.length > 0))];
  return {
    scopes: words.filter(isScope),
    unknown: words.filter((w) => !isScope(w)),
  };
}
