import { createHash, timingSafeEqual } from 'node:crypto';
import type { Random } from '../domain/ports.js';
import type { ClientSettings } from '../domain/client-settings.js';
import type { Scope } from '../domain/scopes.js';

/** A registered OAuth client. */
export interface Client {
  readonly id: string;
  readonly name: string;
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  readonly secretHash: string;
  readonly scopes: readonly Scope[];
  /** Standard Webhooks signing secret, `whsec_` + base64. */
  readonly webhookSecret: string;
  /** The secret before the last rotation, still signed with until `previousWebhookSecretExpiresAt`. */
  readonly previousWebhookSecret: string | null;
  readonly previousWebhookSecretExpiresAt: Date | null;
  readonly disabledAt: Date | null;
  readonly createdAt: Date;
  /** What it set about its verifications (contract 9). */
  readonly settings: ClientSettings;
  /**
   * The relays' hook secret (contract 15), `v1,whsec_` + base64; null (or absent) while the client's relays are off
   * (`clients hooks ID --enable` makes it, `--disable` removes it).
   */
  readonly hookSecret?: string | null;
  /** The hook secret before the last `clients rotate-hook-secret`, still taken until `previousHookSecretExpiresAt`. */
  readonly previousHookSecret?: string | null;
  readonly previousHookSecretExpiresAt?: Date | null;
  /**
   * The signing key ZITADEL made for its HTTP SMS provider (contract 15's ZITADEL relay): ZITADEL makes it and shows
   * it once, so it is given here (`clients hooks ID --zitadel-signing-key KEY`); null (or absent) until then.
   */
  readonly zitadelSigningKey?: string | null;
}

/** Storage of clients (port). */
export interface ClientStore {
  insert(client: Client): Promise<void>;
  find(id: string): Promise<Client | null>;
  list(): Promise<Client[]>;
  count(): Promise<number>;
  /** Applies `change` to the client; returns the updated client, or null when there is none. */
  update(id: string, change: Partial<Omit<Client, 'id' | 'createdAt'>>, now: Date): Promise<Client | null>;
}

/**
 * A client secret: 256 random bits. Because it is high-entropy and random, a single SHA-256 is enough to
 * store it safely (no password stretching is needed), and checking it costs microseconds.
 */
export function newClientSecret(random: Random): string {
  return `cs_${random.bytes(32).toString('base64url')}`;
}

export function newWebhookSecret(random: Random): string {
  return `whsec_${random.bytes(32).toString('base64')}`;
}

/** The relays' hook secret (contract 15), in the form Supabase shows its hook secrets: `v1,whsec_` + base64. */
export function newHookSecret(random: Random): string {
  return `v1,whsec_${random.bytes(32).toString('base64')}`;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Compares a presented secret with the stored hash in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = createHash('sha256').update(secret).digest();
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}
