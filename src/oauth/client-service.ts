import { defaultClientSettings, type ClientSettings } from '../domain/client-settings.js';
import type { Clock, Random } from '../domain/ports.js';
import type { Scope } from '../domain/scopes.js';
import { hashSecret, newClientSecret, newHookSecret, newWebhookSecret, type Client, type ClientStore } from './client.js';

/** What an operator sees of a client: never its secret hash. */
export interface ClientView {
  readonly clientId: string;
  readonly name: string;
  readonly scopes: readonly Scope[];
  readonly status: 'active' | 'disabled';
  readonly createdAt: string;
  readonly disabledAt: string | null;
}

/** A client with the secrets shown once, at creation or rotation. */
export interface ClientCredentials extends ClientView {
  readonly clientSecret: string;
  readonly webhookSecret: string;
}

/** The relays of a client (contract 15): each one's address, and the one secret they are signed with. */
export interface ClientHooks {
  readonly clientId: string;
  /** Null while the client's relays are off (`clients hooks ID --enable` turns them on). */
  readonly hookSecret: string | null;
  /** Until when the secret before the last rotation is still taken; null when there is none. */
  readonly previousHookSecretExpiresAt: string | null;
  /** Supabase Auth's Send SMS Hook URI. */
  readonly supabase: string;
  /** Logto's HTTP SMS connector endpoint. */
  readonly logto: string;
  /** Ory Kratos' HTTP courier `request_config.url` for SMS. */
  readonly kratos: string;
  /** ZITADEL's HTTP SMS provider `endpoint`. */
  readonly zitadel: string;
  /** Whether ZITADEL's signing key was given (it is ZITADEL's secret, never printed back). */
  readonly zitadelSigningKeySet: boolean;
}

/** ZITADEL's signing keys are random text; anything printable and not short is taken as given. */
export function isZitadelSigningKey(key: string): boolean {
  return /^[\x21-\x7e]{16,512}$/.test(key);
}

/** How long a rotated-out webhook or hook secret keeps working, so the other side can switch without a gap. */
export const webhookSecretOverlapMs = 24 * 60 * 60 * 1000;

/**
 * What `clients hooks ID` changes: `enable` makes the hook secret if there is none; `disable` turns every relay
 * off (the hook secret, a rotated-out one and ZITADEL's key are forgotten); `zitadelSigningKey` keeps the key
 * ZITADEL showed, null clears it.
 */
export interface HooksChange {
  readonly enable?: boolean;
  readonly disable?: boolean;
  readonly zitadelSigningKey?: string | null;
}

/** Operator actions on clients. */
export class ClientService {
  constructor(
    private readonly store: ClientStore,
    private readonly clock: Clock,
    private readonly random: Random,
    /** Told when a client changes, so caches on this instance forget it at once. */
    private readonly onChange: (clientId: string) => void = () => undefined,
    /** Whether a client made without saying shows its codes (REVEAL_CODES_DEFAULT). */
    private readonly revealCodesDefault = true,
  ) {}

  /** A new client; its code setting is stored with it, so a later change of the default leaves it as it was. */
  async create(name: string, scopes: readonly Scope[], revealCode = this.revealCodesDefault): Promise<ClientCredentials & { revealCode: boolean }> {
    const clientSecret = newClientSecret(this.random);
    const client: Client = {
      id: this.random.uuid(),
      name,
      secretHash: hashSecret(clientSecret),
      scopes: [...new Set(scopes)],
      webhookSecret: newWebhookSecret(this.random),
      previousWebhookSecret: null,
      previousWebhookSecretExpiresAt: null,
      disabledAt: null,
      createdAt: this.clock.now(),
      settings: { ...defaultClientSettings, revealCode },
    };
    await this.store.insert(client);
    return { ...view(client), clientSecret, webhookSecret: client.webhookSecret, revealCode };
  }

  async list(): Promise<ClientView[]> {
    return (await this.store.list()).map(view);
  }

  async count(): Promise<number> {
    return this.store.count();
  }

  async disable(id: string): Promise<ClientView | null> {
    const existing = await this.store.find(id);
    if (!existing) return null;
    if (existing.disabledAt) return view(existing);
    return this.change(id, { disabledAt: this.clock.now() });
  }

  /** A new client secret; the old one stops working at once on this instance and within 60 s on the others. */
  async rotateSecret(id: string): Promise<ClientCredentials | null> {
    const clientSecret = newClientSecret(this.random);
    const updated = await this.store.update(id, { secretHash: hashSecret(clientSecret) }, this.clock.now());
    if (!updated) return null;
    this.onChange(id);
    return { ...view(updated), clientSecret, webhookSecret: updated.webhookSecret };
  }

  /** A new webhook secret; deliveries are signed with the old one too for the next 24 hours. */
  async rotateWebhookSecret(id: string): Promise<(ClientView & { webhookSecret: string }) | null> {
    const existing = await this.store.find(id);
    if (!existing) return null;
    const now = this.clock.now();
    const updated = await this.store.update(
      id,
      {
        webhookSecret: newWebhookSecret(this.random),
        previousWebhookSecret: existing.webhookSecret,
        previousWebhookSecretExpiresAt: new Date(now.getTime() + webhookSecretOverlapMs),
      },
      now,
    );
    if (!updated) return null;
    this.onChange(id);
    return { ...view(updated), webhookSecret: updated.webhookSecret };
  }

  /**
   * The relays' addresses and hook secret (contract 15, `clients hooks ID`), after `change`. Viewing makes
   * nothing: a client's relays stay off until enabled. The address carries the client: its id is the hook id.
   * ZITADEL makes its own signing key: given here, it is kept, replacing one given before (ZITADEL's "generate a
   * new key").
   */
  async hooks(id: string, publicBaseUrl: string | null, change: HooksChange = {}): Promise<ClientHooks | null> {
    const existing = await this.store.find(id);
    if (!existing) return null;
    const update: Partial<Client> = change.disable
      ? { hookSecret: null, previousHookSecret: null, previousHookSecretExpiresAt: null, zitadelSigningKey: null }
      : {
          ...(change.enable && !existing.hookSecret && { hookSecret: newHookSecret(this.random) }),
          ...(change.zitadelSigningKey !== undefined && change.zitadelSigningKey !== (existing.zitadelSigningKey ?? null) && { zitadelSigningKey: change.zitadelSigningKey }),
        };
    const changed = (Object.keys(update) as (keyof Client)[]).some((k) => (update[k] ?? null) !== (existing[k] ?? null));
    const client = changed ? await this.store.update(id, update, this.clock.now()) : existing;
    if (!client) return null;
    if (changed) this.onChange(id);
    return hooksView(client, publicBaseUrl, this.clock.now());
  }

  /**
   * A new hook secret; the old one is still taken for the next 24 hours, so the auth server can be given the new
   * one without a gap. 'off' when the client's relays are off (there is nothing to rotate).
   */
  async rotateHookSecret(id: string, publicBaseUrl: string | null): Promise<ClientHooks | 'off' | null> {
    const existing = await this.store.find(id);
    if (!existing) return null;
    if (!existing.hookSecret) return 'off';
    const now = this.clock.now();
    const updated = await this.store.update(
      id,
      { hookSecret: newHookSecret(this.random), previousHookSecret: existing.hookSecret, previousHookSecretExpiresAt: new Date(now.getTime() + webhookSecretOverlapMs) },
      now,
    );
    if (!updated) return null;
    this.onChange(id);
    return hooksView(updated, publicBaseUrl, now);
  }

  /** A client and its settings (`clients show`); never a secret. */
  async show(id: string): Promise<(ClientView & { readonly settings: ClientSettings }) | null> {
    const client = await this.store.find(id);
    return client ? { ...view(client), settings: client.settings } : null;
  }

  /**
   * Changes a client's settings with `edit` (which checks them and says what is wrong, or returns them changed);
   * seen at once here and, on PostgreSQL, within moments on every other instance (contract 9).
   */
  async editSettings(
    id: string,
    edit: (current: ClientSettings) => ClientSettings | string,
  ): Promise<{ readonly kind: 'saved'; readonly settings: ClientSettings } | { readonly kind: 'refused'; readonly problem: string } | null> {
    const client = await this.store.find(id);
    if (!client) return null;
    const next = edit(client.settings);
    if (typeof next === 'string') return { kind: 'refused', problem: next };
    const updated = await this.store.update(id, { settings: next }, this.clock.now());
    if (!updated) return null;
    this.onChange(id);
    return { kind: 'saved', settings: updated.settings };
  }

  private async change(id: string, change: Parameters<ClientStore['update']>[1]): Promise<ClientView | null> {
    const updated = await this.store.update(id, change, this.clock.now());
    if (updated) this.onChange(id);
    return updated ? view(updated) : null;
  }
}

function view(c: Client): ClientView {
  return {
    clientId: c.id,
    name: c.name,
    scopes: c.scopes,
    status: c.disabledAt ? 'disabled' : 'active',
    createdAt: c.createdAt.toISOString(),
    disabledAt: c.disabledAt?.toISOString() ?? null,
  };
}

function hooksView(client: Client, publicBaseUrl: string | null, now: Date): ClientHooks {
  const base = publicBaseUrl ?? '';
  const previousUntil = client.previousHookSecret && client.previousHookSecretExpiresAt && client.previousHookSecretExpiresAt > now ? client.previousHookSecretExpiresAt : null;
  return {
    clientId: client.id,
    hookSecret: client.hookSecret ?? null,
    previousHookSecretExpiresAt: previousUntil?.toISOString() ?? null,
    supabase: `${base}/hooks/supabase/send-sms/${client.id}`,
    logto: `${base}/hooks/logto/sms/${client.id}`,
    kratos: `${base}/hooks/kratos/sms/${client.id}`,
    zitadel: `${base}/hooks/zitadel/sms/${client.id}`,
    zitadelSigningKeySet: (client.zitadelSigningKey ?? null) !== null,
  };
}
