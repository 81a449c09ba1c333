import type { ColumnType, Generated } from 'kysely';

type Timestamp = Date;

export interface ClientsTable {
  id: string;
  name: string;
  secret_hash: string;
  scopes: string[];
  webhook_secret: string;
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: Timestamp | null;
  disabled_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The client's settings (ClientSettings), as JSON; read back through parseClientSettings. */
  settings: ColumnType<unknown, string | undefined, string>;
  /** The relays' hook secret (contract 15), `v1,whsec_...`; null while the client's relays are off. */
  hook_secret: ColumnType<string | null, string | null | undefined, string | null>;
  /** The hook secret before the last rotation, still taken until `previous_hook_secret_expires_at`. */
  previous_hook_secret: ColumnType<string | null, string | null | undefined, string | null>;
  previous_hook_secret_expires_at: ColumnType<Timestamp | null, Timestamp | null | undefined, Timestamp | null>;
  /** The signing key ZITADEL made for its HTTP SMS provider (contract 15), kept to check ZITADEL-Signature; null until given. */
  zitadel_signing_key: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SigningKeysTable {
  id: string;
  secret: string;
  created_at: Timestamp;
}

export interface VerificationsTable {
  id: string;
  client_id: string;
  type: string;
  status: string;
  otp: string;
  phone_number: string;
  country_code: string;
  paired_number: string;
  /** The same number in E.164 (null on rows made before 0005). */
  paired_e164: string | null;
  /** Sends asked for: 1 at create, one more per resend. */
  send_requests: number;
  last_send_at: Date;
  locale: string | null;
  code_withheld: Generated<boolean>;
  test_number: Generated<boolean>;
  /** A caller's own SMS text with {{code}} (contract 15, CAMARA). */
  message_text: ColumnType<string | null, string | null | undefined, string | null>;
  /** A code an auth server made, only relayed here (contract 15). */
  relayed: Generated<boolean>;
  /** The risk verdict and factors (contract 18); null: allowed, nothing objected. */
  risk: ColumnType<RiskJson | null, RiskJson | null | undefined, RiskJson | null>;
  /** 0010: ISO 3166 alpha-2, 001 for a non-geographic number; null on rows made before it. */
  region_code: string | null;
  counter: number;
  webhook_url: string | null;
  reference: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  expires_at: Timestamp;
  /** 0004 */
  failure_reason: string | null;
  delivery_channel: Generated<string>;
  delivery_provider: string | null;
  delivery_message_id: string | null;
  delivery_status: Generated<string>;
  delivery_sends: Generated<number>;
  delivery_updated_at: Timestamp | null;
  /** 0015: the workflow's later steps as created (request types), and how many were taken. */
  workflow: Generated<string[]>;
  steps: Generated<number>;
  fallback_after_seconds: Generated<number>;
  /** When the next step falls due (null: not sent yet, or none left). */
  next_step_at: Timestamp | null;
  /** 0036: when the latest send goes through the route's next provider without a DELIVERED receipt (null: none waits). */
  failover_at: Timestamp | null;
  /** Every send attempt, oldest first: [{ channel, provider, status, at }]. */
  deliveries: ColumnType<unknown, string | undefined, string>;
  /** 0020: the signals of the create (contract 14), null once RETENTION_DAYS have passed. */
  signal_ip: string | null;
  signal_network: string | null;
  signal_device: string | null;
  /** `{ ip, deviceId, userAgent, appVersion, platform }` as given (ip canonical); null when none, or forgotten. */
  signals: string | null;
  /** 0031: a country throttle let this create through by its local room (a local user with no history). */
  local_room: Generated<boolean>;
  /** 0032: when its person's data was erased (it then reads as missing); null while kept. */
  erased_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** 0041: the mobile network the number's range was given to, where the number metadata names one. */
  network: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SendJobsTable {
  verification_id: string;
  channel: string;
  sender: string;
  status: string;
  attempts: number;
  next_attempt_at: Timestamp;
  last_error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** 0004 */
  provider: string | null;
  provider_failures: Generated<number>;
}

/** Which verification a provider's message is for (0004). */
export interface ProviderMessagesTable {
  provider: string;
  /** 0012: the account or bind the id is unique within ('' for a provider with one). */
  account: Generated<string>;
  message_id: string;
  /** 0012: the send attempt (the job's attempt count) that got the id. */
  attempt: Generated<number>;
  verification_id: string;
  created_at: Timestamp;
  /** 0015: the verification the id was kept for before the newest send took it over; null when none. */
  taken_from: string | null;
}

/** 0013: receipts that came before their send's acceptance was committed. */
export interface ParkedReceiptsTable {
  id: Generated<string>;
  provider: string;
  account: string;
  message_id: string;
  status: string;
  detail: string | null;
  reported_at: Timestamp | null;
  received_at: Timestamp;
}

export interface MessagesTable {
  id: Generated<number>;
  verification_id: string;
  channel: string;
  recipient: string;
  sender: string;
  body: string;
  created_at: Timestamp;
}

export interface EventsTable {
  id: string;
  client_id: string;
  verification_id: string;
  kind: string;
  payload: ColumnType<unknown, string, string>;
  webhook_url: string | null;
  delivery_status: string;
  attempts: number;
  next_attempt_at: Timestamp | null;
  lease_until: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Attempts made before the last replay: the retry schedule counts from here (0002). */
  retry_base: Generated<number>;
  /** When the attempt holding the lease began (0002). */
  attempt_started_at: Timestamp | null;
  delivered_at: Timestamp | null;
  /** The last failed attempt's status code or error (0002). */
  last_error: string | null;
}

/** One webhook delivery attempt and its outcome (0002). */
export interface WebhookAttemptsTable {
  event_id: string;
  attempt: number;
  attempted_at: Timestamp;
  webhook_url: string;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  next_attempt_at: Timestamp | null;
}

/** 0033: signed relay requests seen, with the answer the first got (null while it is made). */
export interface RelayRequestsTable {
  client_id: string;
  request_key: string;
  created_at: Date;
  answer: ColumnType<unknown, string | null, string | null>;
}

export interface IdempotencyKeysTable {
  client_id: string;
  key: string;
  fingerprint: string;
  verification_id: string;
  created_at: Timestamp;
}

export interface RateCountersTable {
  key: string;
  window_start: Timestamp;
  count: number;
  /** What the last claim of a share granted (0027). */
  last_grant: Generated<number>;
}

/** The countries where a client has had a code verified (NEW_COUNTRY_LIMIT_COUNT), and when last. */
export interface ClientCountriesTable {
  client_id: string;
  region_code: string;
  verified_at: Timestamp;
}

/** A number lookup (0006). */
export interface LookupsTable {
  id: string;
  client_id: string;
  phone_number: string;
  country_code: string;
  region_code: string | null;
  valid: boolean;
  line_type: string;
  carrier: string | null;
  time_zones: string[];
  created_at: Timestamp;
}

/**
 * Sends per client and UTC day, for CLIENT_DAILY_SEND_LIMIT: what instances have claimed of the quota (each
 * spends its share locally) and the workflow steps counted as they commit.
 */
export interface ClientDailySendsTable {
  client_id: string;
  /** YYYY-MM-DD. */
  day: string;
  sends: number;
  /** What the last claim granted (0026): read back by the claim's own statement. */
  last_grant: Generated<number>;
}

/** A range blocked by prefix velocity (contract 10). */
export interface PrefixBlocksTable {
  prefix: string;
  blocked_at: Timestamp;
  blocked_until: Timestamp;
}

export interface Database {
  clients: ClientsTable;
  signing_keys: SigningKeysTable;
  verifications: VerificationsTable;
  send_jobs: SendJobsTable;
  messages: MessagesTable;
  events: EventsTable;
  webhook_attempts: WebhookAttemptsTable;
  idempotency_keys: IdempotencyKeysTable;
  relay_requests: RelayRequestsTable;
  rate_counters: RateCountersTable;
  provider_messages: ProviderMessagesTable;
  parked_receipts: ParkedReceiptsTable;
  lookups: LookupsTable;
  client_daily_sends: ClientDailySendsTable;
  client_countries: ClientCountriesTable;
  prefix_blocks: PrefixBlocksTable;
  country_throttles: CountryThrottlesTable;
  number_lists: NumberListsTable;
  rule_modes: RuleModesTable;
  risk_refusals: RiskRefusalsTable;
  captcha_tokens: CaptchaTokensTable;
  client_throttles: ClientThrottlesTable;
  resend_throttles: ResendThrottlesTable;
  operators: OperatorsTable;
  operator_links: OperatorLinksTable;
  operator_sessions: OperatorSessionsTable;
  operator_passkeys: OperatorPasskeysTable;
  operator_challenges: OperatorChallengesTable;
  audit_log: AuditLogTable;
  routes: RoutesTable;
  prices: PricesTable;
  send_costs: SendCostsTable;
  client_spend: ClientSpendTable;
  budget_holds: BudgetHoldsTable;
}

/** 0029: console operators (contract 16). */
export interface OperatorsTable {
  id: string;
  email: string;
  password_hash: string | null;
  created_at: Date;
  disabled_at: Date | null;
}

/** 0029: one-time links to set an operator's password, by the token's SHA-256. */
export interface OperatorLinksTable {
  token_hash: string;
  operator_id: string;
  expires_at: Date;
  used_at: Date | null;
}

/** 0029: console sessions, by the cookie value's SHA-256. */
export interface OperatorSessionsTable {
  id_hash: string;
  operator_id: string;
  created_at: Date;
  last_seen_at: Date;
}

/** 0029: operators' passkeys (WebAuthn credentials). */
export interface OperatorPasskeysTable {
  credential_id: string;
  operator_id: string;
  public_key: string;
  counter: ColumnType<string, number, number>;
  transports: string[];
  created_at: Date;
}

/** 0029: WebAuthn challenges waiting for their answer. */
export interface OperatorChallengesTable {
  challenge: string;
  operator_id: string | null;
  purpose: string;
  expires_at: Date;
}

/** 0029: the audit log of changes (console and CLI). */
export interface AuditLogTable {
  id: Generated<string>;
  at: Date;
  actor: string;
  action: string;
  target: string | null;
  outcome: string;
}

/** 0023: clients throttled for their conversion across all countries (contract 14). */
export interface ClientThrottlesTable {
  client_id: string;
  throttled_at: Date;
  throttled_until: Date;
  sends: number;
  verified: number;
}

/** 0030: clients whose resends are seldom verified: unknown users' resends are capped (MIN_RESEND_SAMPLE). */
export interface ResendThrottlesTable {
  client_id: string;
  throttled_at: Date;
  throttled_until: Date;
  resends: number;
  verified: number;
}

/** 0022: CAPTCHA tokens accepted in the last 10 minutes, by SHA-256 (contract 14). */
export interface CaptchaTokensTable {
  token_hash: string;
  used_at: Date;
}

/**
 * 0035: routes (contract 17): a channel's providers for a destination (an E.164 prefix, a country or `default`),
 * in failover order. Weights, the delivery-confirmed failover's seconds and the policy are kept for the route's
 * later options; null and `ordered` until then.
 */
export interface RoutesTable {
  channel: string;
  destination: string;
  providers: string[];
  weights: number[] | null;
  failover_after_seconds: number | null;
  policy: string;
  updated_at: Date;
}

/** 0037: prices (contract 17): a provider's price per message of a channel to a destination. */
export interface PricesTable {
  provider: string;
  channel: string;
  destination: string;
  currency: string;
  /** numeric: text as read. */
  price: ColumnType<string, string, string>;
  updated_at: Date;
}

/** 0037: the cost ledger, one row per send a provider took. */
export interface SendCostsTable {
  id: Generated<string>;
  verification_id: string;
  client_id: string;
  sent_at: Date;
  channel: string;
  provider: string;
  region_code: string | null;
  /** The destination of the route the send took (`default` for the channel's provider list). */
  route: string;
  cost: ColumnType<string | null, string | null, string | null>;
  reported_amount: ColumnType<string | null, string | null, string | null>;
  reported_currency: string | null;
}

/** 0021: block and allow lists (contract 14); `client_id` null: service-wide. */
export interface NumberListsTable {
  id: Generated<number>;
  kind: string;
  value: string;
  client_id: string | null;
  note: string | null;
  created_at: Date;
}

/** 0010: countries throttled for their conversion through a provider (contract 10). */
export interface CountryThrottlesTable {
  region_code: string;
  country_code: string;
  provider: string;
  /** 0041: the mobile network throttled; '' for the country's numbers whose network is not known. */
  network: Generated<string>;
  throttled_at: Date;
  throttled_until: Date;
  sends: number;
  verified: number;
}

/** 0039: a budgeted client's spend in a UTC day or month (contract 17). */
export interface ClientSpendTable {
  client_id: string;
  period: 'day' | 'month';
  /** The period's first day. */
  starts: string;
  spent: ColumnType<string, string | undefined, string>;
}

/** 0039: what admitted sends hold of their client's budget until a provider takes them. */
export interface BudgetHoldsTable {
  verification_id: string;
  client_id: string;
  amount: ColumnType<string, string, string>;
  sends: number;
  day: string;
  created_at: Date;
}

export interface RiskJson {
  readonly verdict: string;
  readonly factors: readonly { readonly factor: string; readonly rule: string; readonly mode: string }[];
}

export interface RuleModesTable {
  rule: string;
  client_id: string | null;
  mode: string;
  updated_at: ColumnType<Date, Date, Date>;
}

export interface RiskRefusalsTable {
  id: Generated<number>;
  client_id: string;
  phone_number: string;
  rule: string;
  factor: string;
  refused_at: ColumnType<Date, Date, Date>;
}
