import type { Budget } from '../domain/budgets.js';
import { defaultDecisionTimeoutMs, type DecisionSetting } from '../domain/decision.js';
import { parseAmount } from '../domain/money.js';
import { captchaProviders, defaultMinScore, type CaptchaProvider, type CaptchaSetting } from '../domain/captcha.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import { defaultClientSettings, type ClientSettings } from '../domain/client-settings.js';
import type { Client, ClientStore } from '../oauth/client.js';
import { isScope } from '../domain/scopes.js';
import type { ClientsTable, Database } from './schema.js';
import { isUuid } from './uuid.js';

/** PostgreSQL channel told of each client change (payload: the client id), so every instance forgets its cached copy. */
export const clientsChannel = 'otp_clients';

export class SqlClientStore implements ClientStore {
  constructor(
    private readonly db: Kysely<Database>,
    /**
     * PostgreSQL: each change is announced on `clientsChannel` by the transaction that makes it, so the
     * announcement goes out with the commit, whoever commits it: a server, or a CLI process that exits at once.
     */
    private readonly announce: boolean,
  ) {}

  async insert(c: Client): Promise<void> {
    await this.db
      .insertInto('clients')
      .values({
        id: c.id,
        name: c.name,
        secret_hash: c.secretHash,
        scopes: [...c.scopes],
        webhook_secret: c.webhookSecret,
        previous_webhook_secret: c.previousWebhookSecret,
        previous_webhook_secret_expires_at: c.previousWebhookSecretExpiresAt,
        disabled_at: c.disabledAt,
        created_at: c.createdAt,
        updated_at: c.createdAt,
        settings: JSON.stringify(c.settings),
      })
      .execute();
  }

  async find(id: string): Promise<Client | null> {
    if (!isUuid(id)) return null;
    const row = await this.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toClient(row) : null;
  }

  async list(): Promise<Client[]> {
    const rows = await this.db.selectFrom('clients').selectAll().orderBy('created_at').execute();
    return rows.map(toClient);
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('clients')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async update(id: string, change: Partial<Omit<Client, 'id' | 'createdAt'>>, now: Date): Promise<Client | null> {
    if (!isUuid(id)) return null;
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('clients')
        .set({
          updated_at: now,
          ...(change.name !== undefined && { name: change.name }),
          ...(change.secretHash !== undefined && { secret_hash: change.secretHash }),
          ...(change.scopes !== undefined && { scopes: [...change.scopes] }),
          ...(change.webhookSecret !== undefined && { webhook_secret: change.webhookSecret }),
          ...(change.hookSecret !== undefined && { hook_secret: change.hookSecret }),
          ...(change.previousHookSecret !== undefined && { previous_hook_secret: change.previousHookSecret }),
          ...(change.previousHookSecretExpiresAt !== undefined && { previous_hook_secret_expires_at: change.previousHookSecretExpiresAt }),
          ...(change.zitadelSigningKey !== undefined && { zitadel_signing_key: change.zitadelSigningKey }),
          ...(change.previousWebhookSecret !== undefined && { previous_webhook_secret: change.previousWebhookSecret }),
          ...(change.previousWebhookSecretExpiresAt !== undefined && {
            previous_webhook_secret_expires_at: change.previousWebhookSecretExpiresAt,
          }),
          ...(change.disabledAt !== undefined && { disabled_at: change.disabledAt }),
          ...(change.settings !== undefined && { settings: JSON.stringify(change.settings) }),
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (!row) return null;
      if (this.announce) await sql`SELECT pg_notify(${clientsChannel}, ${id})`.execute(trx);
      return toClient(row);
    });
  }
}

function toClient(row: Selectable<ClientsTable>): Client {
  return {
    id: row.id,
    name: row.name,
    secretHash: row.secret_hash,
    scopes: row.scopes.filter(isScope),
    webhookSecret: row.webhook_secret,
    previousWebhookSecret: row.previous_webhook_secret,
    previousWebhookSecretExpiresAt: row.previous_webhook_secret_expires_at,
    disabledAt: row.disabled_at,
    createdAt: row.created_at,
    settings: parseClientSettings(row.settings),
    ...(row.hook_secret !== null && { hookSecret: row.hook_secret }),
    ...(row.previous_hook_secret !== null && { previousHookSecret: row.previous_hook_secret, previousHookSecretExpiresAt: row.previous_hook_secret_expires_at }),
    ...(row.zitadel_signing_key !== null && { zitadelSigningKey: row.zitadel_signing_key }),
  };
}

/** Stored settings, read defensively: a key missing (an older row) or of the wrong shape takes its default. */
export function parseClientSettings(raw: unknown): ClientSettings {
  const o = typeof raw === 'string' ? (JSON.parse(raw) as unknown) : raw;
  const obj = typeof o === 'object' && o !== null ? (o as Record<string, unknown>) : {};
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  const strings = (v: unknown): Record<string, string> =>
    typeof v === 'object' && v !== null
      ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'))
      : {};
  const d = defaultClientSettings;
  return {
    appName: text(obj.appName) ?? d.appName,
    webotpDomain: text(obj.webotpDomain) ?? d.webotpDomain,
    androidAppHash: text(obj.androidAppHash) ?? d.androidAppHash,
    defaultWebhookUrl: text(obj.defaultWebhookUrl) ?? d.defaultWebhookUrl,
    revealCode: typeof obj.revealCode === 'boolean' ? obj.revealCode : d.revealCode,
    allowedCountries: Array.isArray(obj.allowedCountries) ? obj.allowedCountries.filter((c): c is string => typeof c === 'string') : d.allowedCountries,
    defaultLocale: text(obj.defaultLocale) ?? d.defaultLocale,
    templates: strings(obj.templates),
    voiceTemplates: strings(obj.voiceTemplates),
    testNumbers: strings(obj.testNumbers),
    fallback: Array.isArray(obj.fallback) ? obj.fallback.filter((t): t is string => typeof t === 'string') : d.fallback,
    fallbackAfterSeconds: typeof obj.fallbackAfterSeconds === 'number' ? obj.fallbackAfterSeconds : d.fallbackAfterSeconds,
    captcha: captchaOf(obj.captcha),
    budget: budgetOf(obj.budget),
    decision: decisionOf(obj.decision),
  };
}

/** A stored decision webhook; anything not of its shape reads as none. */
function decisionOf(raw: unknown): DecisionSetting | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const { url, timeoutMs, fallback } = raw as Record<string, unknown>;
  if (typeof url !== 'string') return null;
  return { url, timeoutMs: typeof timeoutMs === 'number' ? timeoutMs : defaultDecisionTimeoutMs, fallback: fallback === 'deny' ? 'deny' : 'allow' };
}

/** A stored budget; an amount not of its shape reads as no limit. */
function budgetOf(raw: unknown): Budget {
  const o = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const amount = (v: unknown) => (typeof v === 'string' ? parseAmount(v) : null);
  return { daily: amount(o.daily), monthly: amount(o.monthly) };
}

/** A stored CAPTCHA setting; anything not of its shape reads as none. */
function captchaOf(raw: unknown): CaptchaSetting | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const { provider, secret, minScore, when } = raw as Record<string, unknown>;
  if (!(captchaProviders as readonly unknown[]).includes(provider) || typeof secret !== 'string') return null;
  return {
    provider: provider as CaptchaProvider,
    secret,
    minScore: typeof minScore === 'number' ? minScore : defaultMinScore,
    // Settings stored before issue 20 had no `when`: they asked always.
    when: when === 'throttled' ? 'throttled' : 'always',
  };
}
