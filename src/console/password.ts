import { scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Operators' passwords, hashed with scrypt (node:crypto, no native package): N=2^15, r=8, p=1 costs about 32 MiB
 * and tens of milliseconds per try, OWASP's floor for scrypt. The parameters are written into each hash, so they
 * can be raised later without breaking the hashes already stored.
 */
const cost = { N: 2 ** 15, r: 8, p: 1 } as const;
const keyLength = 32;

/** Longer than this is refused: scrypt takes any length, but a megabyte "password" is a way to burn CPU. */
export const maxPasswordLength = 200;
export const minPasswordLength = 12;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem above the 128 * N * r the parameters need (Node's default of 32 MiB is just below it).
    scrypt(password.normalize('NFC'), salt, keyLength, { ...options, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < minPasswordLength) return `a password needs at least ${minPasswordLength} characters`;
  if (password.length > maxPasswordLength) return `a password has at most ${maxPasswordLength} characters`;
  return null;
}

/** `scrypt$N$r$p$salt$key` (salt and key base64url); salt: 16 random bytes from the caller's Random. */
export async function hashPassword(password: string, salt: Buffer): Promise<string> {
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** A hash no password matches, checked for an unknown or password-less operator so that the answer takes as long. */
export const unmatchableHash = `scrypt$${cost.N}$${cost.r}$${cost.p}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(keyLength).toString('base64url')}`;

/** Whether the password is the one hashed, compared in constant time; false for a hash this code did not write. */
export async function passwordMatches(password: string, stored: string): Promise<boolean> {
  if (password.length > maxPasswordLength) return false;
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (!N || !r || !p || N > 2 ** 20 || r > 32 || p > 16) return false;
  const salt = Buffer.from(parts[4] ?? '', 'base64url');
  const expected = Buffer.from(parts[5] ?? '', 'base64url');
  if (expected.length !== keyLength) return false;
  const key = await derive(password, salt, { N, r, p });
  // The all-zero key of unmatchableHash is never an scrypt output.
  return timingSafeEqual(key, expected) && !expected.equals(Buffer.alloc(keyLength));
}
