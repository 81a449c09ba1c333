import { Migrator, NO_MIGRATIONS, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

/**
 * The schema, one migration per step, for PGlite and PostgreSQL alike. Never edit a migration that has
 * shipped: add the next one.
 */
const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        CREATE TABLE clients (
          id uuid PRIMARY KEY,
          name text NOT NULL,
          secret_hash text NOT NULL,
          scopes text[] NOT NULL,
          webhook_secret text NOT NULL,
          previous_webhook_secret text,
          previous_webhook_secret_expires_at timestamptz,
          disabled_at timestamptz,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL
        );
        CREATE TABLE signing_keys (
          id text PRIMARY KEY,
          secret text NOT NULL,
          created_at timestamptz NOT NULL
        );
        CREATE TABLE verifications (
          id uuid PRIMARY KEY,
          client_id uuid NOT NULL REFERENCES clients(id),
          type text NOT NULL,
          status text NOT NULL,
          otp text NOT NULL,
          phone_number text NOT NULL,
          country_code text NOT NULL,
          paired_number text NOT NULL,
          counter integer NOT NULL DEFAULT 0,
          webhook_url text,
          reference text,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          expires_at timestamptz NOT NULL
        );
        -- phone limits: one client's recent verifications of one number
        CREATE INDEX verifications_client_phone_created ON verifications (client_id, phone_number, created_at);
        -- expiry sweep: only pending rows are ever looked at
        CREATE INDEX verifications_pending_expiry ON verifications (expires_at) WHERE status = 'PENDING';
        CREATE TABLE send_jobs (
          verification_id uuid PRIMARY KEY REFERENCES verifications(id),
          channel text NOT NULL,
          -- E.164 the code is sent from: the SMS sender, or the caller id whose last digits are the code
          sender text NOT NULL,
          status text NOT NULL,
          attempts integer NOT NULL DEFAULT 0,
          -- a claimed job is pushed into the future by its lease, so a crashed worker's job comes back
          next_attempt_at timestamptz NOT NULL,
          last_error text,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL
        );
        CREATE INDEX send_jobs_due ON send_jobs (next_attempt_at) WHERE status = 'pending';
        CREATE TABLE messages (
          id bigserial PRIMARY KEY,
          verification_id uuid NOT NULL,
          channel text NOT NULL,
          recipient text NOT NULL,
          sender text NOT NULL,
          body text NOT NULL,
          created_at timestamptz NOT NULL
        );
        CREATE INDEX messages_verification ON messages (verification_id);
        CREATE TABLE events (
          id uuid PRIMARY KEY,
          client_id uuid NOT NULL,
          verification_id uuid NOT NULL,
          kind text NOT NULL,
          payload jsonb NOT NULL,
          webhook_url text,
          delivery_status text NOT NULL,
          attempts integer NOT NULL DEFAULT 0,
          next_attempt_at timestamptz,
          lease_until timestamptz,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL
        );
        CREATE INDEX events_verification ON events (verification_id, created_at);
        CREATE INDEX events_due ON events (next_attempt_at) WHERE delivery_status = 'pending';
        CREATE TABLE idempotency_keys (
          client_id uuid NOT NULL,
          key text NOT NULL,
          fingerprint text NOT NULL,
          verification_id uuid NOT NULL,
          created_at timestamptz NOT NULL,
          PRIMARY KEY (client_id, key)
        );
        CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
        CREATE TABLE rate_counters (
          key text NOT NULL,
          window_start timestamptz NOT NULL,
          count integer NOT NULL,
          PRIMARY KEY (key, window_start)
        );
        CREATE INDEX rate_counters_window ON rate_counters (window_start);
      `);
    },
  },
  '0002_webhooks': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- the retry schedule counts attempts from here: 0 at first, the attempt count at each operator replay
        ALTER TABLE events ADD COLUMN retry_base integer NOT NULL DEFAULT 0;
        -- when the attempt holding the lease began; kept until it ends, so an interrupted attempt can be recorded
        ALTER TABLE events ADD COLUMN attempt_started_at timestamptz;
        ALTER TABLE events ADD COLUMN delivered_at timestamptz;
        -- the last failed attempt's status code or error, for operators' lists
        ALTER TABLE events ADD COLUMN last_error text;
        ALTER TABLE events ADD CONSTRAINT events_delivery_status_known
          CHECK (delivery_status IN ('pending', 'delivered', 'failed', 'none'));
        -- operators' lists: newest first, optionally of one status
        CREATE INDEX events_status_created ON events (delivery_status, created_at);
        -- one row per delivery attempt, with its outcome
        CREATE TABLE webhook_attempts (
          event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
          attempt integer NOT NULL,
          attempted_at timestamptz NOT NULL,
          webhook_url text NOT NULL,
          outcome text NOT NULL CHECK (outcome IN ('delivered', 'failed', 'interrupted')),
          status_code integer,
          error text,
          duration_ms integer,
          -- when the next attempt was scheduled after this one (null when none)
          next_attempt_at timestamptz,
          PRIMARY KEY (event_id, attempt)
        );
      `);
    },
  },
  '0003_retention': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- retention: old history is found by age without scanning
        CREATE INDEX messages_created ON messages (created_at);
        CREATE INDEX send_jobs_finished ON send_jobs (updated_at) WHERE status <> 'pending';
      `);
    },
  },
  '0004_delivery': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- why a verification is FAILED: MAX_ATTEMPTS, UNDELIVERABLE or CANCELED
        ALTER TABLE verifications ADD COLUMN failure_reason text;
        -- the latest send of the code (contract 3.4 delivery)
        ALTER TABLE verifications ADD COLUMN delivery_channel text NOT NULL DEFAULT 'SMS';
        ALTER TABLE verifications ADD COLUMN delivery_provider text;
        ALTER TABLE verifications ADD COLUMN delivery_message_id text;
        ALTER TABLE verifications ADD COLUMN delivery_status text NOT NULL DEFAULT 'QUEUED';
        ALTER TABLE verifications ADD COLUMN delivery_sends integer NOT NULL DEFAULT 0;
        ALTER TABLE verifications ADD COLUMN delivery_updated_at timestamptz;
        UPDATE verifications SET delivery_channel = 'CALL' WHERE type = 'DROPPED_CALL';
        UPDATE verifications v SET failure_reason = CASE WHEN EXISTS (
            SELECT 1 FROM send_jobs j WHERE j.verification_id = v.id AND j.status = 'failed') THEN 'UNDELIVERABLE' ELSE 'MAX_ATTEMPTS' END
          WHERE status = 'FAILED';
        -- the provider of the next attempt (null: the first configured) and its transient failures in a row
        ALTER TABLE send_jobs ADD COLUMN provider text;
        ALTER TABLE send_jobs ADD COLUMN provider_failures integer NOT NULL DEFAULT 0;
        -- which verification a provider's message is for: receipts come back under the provider's id
        CREATE TABLE provider_messages (
          provider text NOT NULL,
          message_id text NOT NULL,
          verification_id uuid NOT NULL,
          created_at timestamptz NOT NULL,
          PRIMARY KEY (provider, message_id)
        );
        CREATE INDEX provider_messages_created ON provider_messages (created_at);
      `);
    },
  },
  '0005_verification_life': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- the number the user is contacted from in E.164: a dropped call can be verified with its whole caller id
        ALTER TABLE verifications ADD COLUMN paired_e164 text;
        UPDATE verifications v SET paired_e164 = j.sender FROM send_jobs j WHERE j.verification_id = v.id;
        -- resends (contract 9): sends asked for, and when the latest was
        ALTER TABLE verifications ADD COLUMN send_requests integer NOT NULL DEFAULT 1;
        ALTER TABLE verifications ADD COLUMN last_send_at timestamptz;
        UPDATE verifications SET last_send_at = created_at;
        ALTER TABLE verifications ALTER COLUMN last_send_at SET NOT NULL;
        -- client settings (contract 9): the text's locale, codes withheld from answers, test numbers
        ALTER TABLE verifications ADD COLUMN locale text;
        ALTER TABLE verifications ADD COLUMN code_withheld boolean NOT NULL DEFAULT false;
        ALTER TABLE verifications ADD COLUMN test_number boolean NOT NULL DEFAULT false;
      `);
    },
  },
  '0007_client_settings': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- what a client sets about its verifications (contract 9), one JSON document read with the client
        ALTER TABLE clients ADD COLUMN settings jsonb NOT NULL DEFAULT '{}'::jsonb;
      `);
    },
  },
  '0006_lookups': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- number lookups (contract 11), read back by id by the client that made them
        CREATE TABLE lookups (
          id uuid PRIMARY KEY,
          client_id uuid NOT NULL REFERENCES clients(id),
          phone_number text NOT NULL,
          country_code text NOT NULL,
          region_code text,
          valid boolean NOT NULL,
          line_type text NOT NULL,
          carrier text,
          time_zones text[] NOT NULL,
          created_at timestamptz NOT NULL
        );
        -- retention: old lookups are found by age without scanning
        CREATE INDEX lookups_created ON lookups (created_at);
      `);
    },
  },
  '0008_client_daily_sends': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- CLIENT_DAILY_SEND_LIMIT (contract 6): each client's sends per UTC day, counted as creates commit
        CREATE TABLE client_daily_sends (
          client_id uuid NOT NULL REFERENCES clients(id),
          day date NOT NULL,
          sends integer NOT NULL,
          PRIMARY KEY (client_id, day)
        );
      `);
    },
  },
  '0009_prefix_velocity': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- prefix velocity (contract 10): recent creates towards a range (the number less its last 3 digits)
        CREATE INDEX verifications_prefix ON verifications ((left(phone_number, -3)), created_at) WHERE NOT test_number;
        -- ranges blocked after too many creates, until blocked_until or until the operator lifts them
        CREATE TABLE prefix_blocks (
          prefix text PRIMARY KEY,
          blocked_at timestamptz NOT NULL,
          blocked_until timestamptz NOT NULL
        );
      `);
    },
  },
  '0010_traffic_by_country': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- the country of a number (ISO 3166 alpha-2, 001 for a non-geographic one): stats and conversion (contract 10)
        ALTER TABLE verifications ADD COLUMN region_code text;
        -- GET /v1/stats (a client's verifications by day), conversion over the last hour and the creates of a
        -- throttled country (every client's range, client by client). One index only: a verify rewrites every
        -- index entry of its row (its status leaves the pending-expiry index), and a second cost it 6 %.
        CREATE INDEX verifications_client_created ON verifications (client_id, created_at);
        -- countries whose conversion through a provider fell under MIN_CONVERSION, throttled to the prefix limit
        CREATE TABLE country_throttles (
          region_code text NOT NULL,
          country_code text NOT NULL,
          provider text NOT NULL,
          throttled_at timestamptz NOT NULL,
          throttled_until timestamptz NOT NULL,
          sends integer NOT NULL,
          verified integer NOT NULL,
          PRIMARY KEY (region_code, country_code, provider)
        );
      `);
    },
  },
  '0011_create_path_without_foreign_keys': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- A create writes a verification and its send job in one transaction, for a client read from its token;
        -- neither clients nor verifications are ever deleted. The two checks never failed, and each cost a
        -- lookup per row: the client's one row locked FOR KEY SHARE by every concurrent create, and the new
        -- verification's row found through a plan the connection keeps. Planned while the table was still small
        -- (stale statistics after a quiet start) that plan is a sequential scan, and kept until the next ANALYZE it
        -- halved create throughput (bench: about 950 against 2,000 req/s, and 11 against 1.7 ms per insert).
        ALTER TABLE send_jobs DROP CONSTRAINT IF EXISTS send_jobs_verification_id_fkey;
        ALTER TABLE verifications DROP CONSTRAINT IF EXISTS verifications_client_id_fkey;
      `);
    },
  },
  '0012_provider_message_accounts': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- A provider's message ids are unique only within the account or bind that sent them (an SMSC numbers its
        -- messages again from the start after a restart): the mapping is keyed by the three, and the send attempt
        -- that got the id is kept beside the verification.
        ALTER TABLE provider_messages ADD COLUMN account text NOT NULL DEFAULT '';
        ALTER TABLE provider_messages ADD COLUMN attempt integer NOT NULL DEFAULT 0;
        ALTER TABLE provider_messages DROP CONSTRAINT provider_messages_pkey;
        ALTER TABLE provider_messages ADD PRIMARY KEY (provider, account, message_id);
      `);
    },
  },
  '0013_parked_receipts': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- Receipts that came before the acceptance of their send was committed (a provider that reports at once,
        -- or answers the send late): kept, and applied when the acceptance is recorded.
        CREATE TABLE parked_receipts (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          provider text NOT NULL,
          account text NOT NULL,
          message_id text NOT NULL,
          status text NOT NULL,
          detail text,
          reported_at timestamptz,
          received_at timestamptz NOT NULL
        );
        CREATE INDEX parked_receipts_message ON parked_receipts (provider, account, message_id);
        CREATE INDEX parked_receipts_received ON parked_receipts (received_at);
      `);
    },
  },
  '0014_send_jobs_due_by_provider': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- A worker claims only the jobs of its own providers (0012's jobs name theirs): due jobs are found by
        -- channel and provider, so that jobs no process here can take (a provider another process has, or none
        -- has any more) are never read by each claim.
        DROP INDEX send_jobs_due;
        CREATE INDEX send_jobs_due ON send_jobs (channel, (coalesce(provider, '')), next_attempt_at) WHERE status = 'pending';
      `);
    },
  },
  '0015_provider_message_taken_from': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- The send an id was taken over from (a provider that numbers its messages again): the acceptance's upsert
        -- writes it from the row it replaces and returns it, instead of looking the id up a second time.
        ALTER TABLE provider_messages ADD COLUMN taken_from uuid;
      `);
    },
  },
  '0016_workflow': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- The workflow across channels (contract 13): the later steps a create asked for (request types, in order),
        -- how many were taken, the clock of the current one, and every send attempt for the record's deliveries.
        -- Kept on the row so that a read stays one query.
        ALTER TABLE verifications ADD COLUMN workflow text[] NOT NULL DEFAULT '{}';
        ALTER TABLE verifications ADD COLUMN steps integer NOT NULL DEFAULT 0;
        ALTER TABLE verifications ADD COLUMN fallback_after_seconds integer NOT NULL DEFAULT 60;
        ALTER TABLE verifications ADD COLUMN next_step_at timestamptz;
        ALTER TABLE verifications ADD COLUMN deliveries jsonb NOT NULL DEFAULT '[]'::jsonb;
        -- Steps falling due: only pending rows with a clock running are in it, so rows without a workflow (most)
        -- never touch it, and an acceptance that leaves next_step_at null stays a HOT update.
        CREATE INDEX verifications_next_step ON verifications (next_step_at) WHERE status = 'PENDING' AND next_step_at IS NOT NULL;
      `);
    },
  },
  '0020_signals': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- The end user as the client's backend saw them (contract 14), kept beside the verification for
        -- RETENTION_DAYS and never shown. The address, its /24 or /48 and the device are what the signal limits
        -- count, client by client over the window: each has a partial index, so rows without them cost nothing.
        ALTER TABLE verifications ADD COLUMN signal_ip text;
        ALTER TABLE verifications ADD COLUMN signal_network text;
        ALTER TABLE verifications ADD COLUMN signal_device text;
        ALTER TABLE verifications ADD COLUMN signals jsonb;
        CREATE INDEX verifications_signal_ip ON verifications (client_id, signal_ip, created_at) WHERE signal_ip IS NOT NULL;
        CREATE INDEX verifications_signal_network ON verifications (client_id, signal_network, created_at) WHERE signal_network IS NOT NULL;
        CREATE INDEX verifications_signal_device ON verifications (client_id, signal_device, created_at) WHERE signal_device IS NOT NULL;
        -- The retention job finds what it must forget without reading every verification.
        CREATE INDEX verifications_signals_kept ON verifications (created_at) WHERE signals IS NOT NULL;
      `);
    },
  },
  '0021_number_lists': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- Block and allow lists (contract 14): numbers or prefixes, service-wide (client_id null) or per client.
        -- Every instance holds them in memory; they are few, and read whole when a change is announced.
        CREATE TABLE number_lists (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          kind text NOT NULL CHECK (kind IN ('block', 'allow')),
          value text NOT NULL,
          client_id uuid,
          note text,
          created_at timestamptz NOT NULL
        );
        CREATE UNIQUE INDEX number_lists_entry ON number_lists (kind, value, (coalesce(client_id::text, '')));
      `);
    },
  },
  '0022_captcha_tokens': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- CAPTCHA tokens the service accepted (contract 14), remembered 10 minutes so that no token serves twice,
        -- whichever instance it comes to. Kept as a hash: a token is a credential while it lives.
        CREATE TABLE captcha_tokens (
          token_hash text PRIMARY KEY,
          used_at timestamptz NOT NULL
        );
        CREATE INDEX captcha_tokens_used ON captcha_tokens (used_at);
      `);
    },
  },
  '0023_client_throttles': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- A client whose sends across all countries convert too seldom (contract 14: an attack spread thin over
        -- many countries): one row per client, its throttle's span and the figures that started it.
        CREATE TABLE client_throttles (
          client_id uuid PRIMARY KEY,
          throttled_at timestamptz NOT NULL,
          throttled_until timestamptz NOT NULL,
          sends integer NOT NULL,
          verified integer NOT NULL
        );
      `);
    },
  },
  '0025_drop_in_surfaces': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- contract 15: a caller's own SMS text with {{code}} (CAMARA send-code), used instead of the client's
        -- templates; and codes made by an auth server and only relayed here (never verified here: conversion
        -- reads their delivery).
        ALTER TABLE verifications ADD COLUMN message_text text;
        ALTER TABLE verifications ADD COLUMN relayed boolean NOT NULL DEFAULT false;
        -- the client's relay hook secret (v1,whsec_...), made by the first \`otp-service clients hooks ID\`.
        ALTER TABLE clients ADD COLUMN hook_secret text;
      `);
    },
  },
  '0026_daily_send_shares': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- CLIENT_DAILY_SEND_LIMIT is claimed in shares (DailySendStore): a day's sends count what instances have
        -- claimed, and a claim's grant is returned from the same statement that raised the count.
        ALTER TABLE client_daily_sends ADD COLUMN last_grant integer NOT NULL DEFAULT 0;
      `);
    },
  },
  '0027_new_country_limit': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- NEW_COUNTRY_LIMIT_COUNT (issue 20): the countries where each client has had a code verified, and when
        -- last; the conversion watch adds to it from the last hour as it reads conversion, and every instance
        -- holds it in memory. Seeded from the verifications kept.
        CREATE TABLE client_countries (
          client_id uuid NOT NULL,
          region_code text NOT NULL,
          verified_at timestamptz NOT NULL,
          PRIMARY KEY (client_id, region_code)
        );
        INSERT INTO client_countries (client_id, region_code, verified_at)
          SELECT client_id, region_code, max(created_at) FROM verifications
            WHERE status = 'SUCCESS' AND region_code IS NOT NULL AND NOT test_number
            GROUP BY client_id, region_code;
        -- A share claimed from a window's quota (QuotaLimiter) is read back from the statement that claimed it.
        ALTER TABLE rate_counters ADD COLUMN last_grant integer NOT NULL DEFAULT 0;
        -- An address is found through its network's index (same client, same /24 or /48): one index fewer to
        -- write on every create that sends signals.
        DROP INDEX verifications_signal_ip;
      `);
    },
  },
  '0028_zitadel_signing_key': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- contract 15: ZITADEL makes its HTTP SMS provider's signing key itself (and shows it once), so the relay
        -- keeps the key it was given (\`otp-service clients hooks ID --zitadel-signing-key KEY\`) to check
        -- ZITADEL-Signature with; null until then.
        ALTER TABLE clients ADD COLUMN zitadel_signing_key text;
      `);
    },
  },
  '0029_console': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- contract 16: the operator console. Operators are people, made by \`otp-service operators create\`.
        CREATE TABLE operators (
          id uuid PRIMARY KEY,
          email text NOT NULL UNIQUE,
          -- scrypt, as src/console/password.ts writes it; null until the one-time link is used.
          password_hash text,
          created_at timestamptz NOT NULL,
          disabled_at timestamptz
        );
        -- One-time links to set a password (and a passkey): only the token's SHA-256 is kept.
        CREATE TABLE operator_links (
          token_hash text PRIMARY KEY,
          operator_id uuid NOT NULL,
          expires_at timestamptz NOT NULL,
          used_at timestamptz
        );
        -- Console sessions: only the cookie value's SHA-256 is kept, so a copy of the table signs nobody in.
        CREATE TABLE operator_sessions (
          id_hash text PRIMARY KEY,
          operator_id uuid NOT NULL,
          created_at timestamptz NOT NULL,
          last_seen_at timestamptz NOT NULL
        );
        CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id);
        -- Passkeys (WebAuthn credentials): the public key and its signature counter.
        CREATE TABLE operator_passkeys (
          credential_id text PRIMARY KEY,
          operator_id uuid NOT NULL,
          public_key text NOT NULL,
          counter bigint NOT NULL,
          transports text[] NOT NULL,
          created_at timestamptz NOT NULL
        );
        -- WebAuthn challenges waiting for their answer (any instance may get it), each used once.
        CREATE TABLE operator_challenges (
          challenge text PRIMARY KEY,
          operator_id uuid,
          purpose text NOT NULL,
          expires_at timestamptz NOT NULL
        );
        -- Every change made through the console or the CLI: who, what, on what, when, how it ended; never a secret.
        CREATE TABLE audit_log (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          at timestamptz NOT NULL,
          actor text NOT NULL,
          action text NOT NULL,
          target text,
          outcome text NOT NULL
        );
        CREATE INDEX audit_log_at ON audit_log (at);
        -- The console finds a verification by its reference, whichever client made it. (By number it walks the
        -- clients over the (client_id, phone_number, created_at) index: one more index on the create's hot table
        -- would cost every create for the sake of an operator's search.)
        CREATE INDEX verifications_reference ON verifications (reference) WHERE reference IS NOT NULL
      `);
    },
  },
  '0030_resend_throttles': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- A client whose resends of the last minute or so are seldom verified (MIN_RESEND_SAMPLE): while its row
        -- is in force, a code of a user with no verified history is resent at most UNKNOWN_USER_RESENDS times.
        -- One row per client, its throttle's span and the figures that started it.
        CREATE TABLE resend_throttles (
          client_id uuid PRIMARY KEY,
          throttled_at timestamptz NOT NULL,
          throttled_until timestamptz NOT NULL,
          resends integer NOT NULL,
          verified integer NOT NULL
        );
      `);
    },
  },
  '0031_local_room': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- A create that a country throttle let through for a local user (their address in their number's country):
        -- the country's local room counts only these, so that an attack from addresses in the country earns room
        -- only from the local users who verify beside it. A constant default adds the column without a rewrite.
        ALTER TABLE verifications ADD COLUMN local_room boolean NOT NULL DEFAULT false
      `);
    },
  },
  '0032_erased': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- A verification whose person's data was erased (an operator's erase, the client's DELETE, or
        -- VERIFICATION_RETENTION_DAYS): the row stays for counts, its number reduced to its prefix, and reads 404.
        ALTER TABLE verifications ADD COLUMN erased_at timestamptz;
        -- The retention job finds the next ones to erase by age without reading the erased ones again.
        CREATE INDEX verifications_unerased_created ON verifications (created_at) WHERE erased_at IS NULL
      `);
    },
  },
  '0033_relay_requests': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- Signed relay requests seen (a Supabase webhook-id, a ZITADEL signature), kept while their signature could
        -- still be accepted: a copy replayed within that window is answered as the first was and sends nothing,
        -- whichever instance it reaches.
        CREATE TABLE relay_requests (
          client_id uuid NOT NULL,
          request_key text NOT NULL,
          created_at timestamptz NOT NULL,
          answer jsonb,
          PRIMARY KEY (client_id, request_key)
        );
        CREATE INDEX relay_requests_created ON relay_requests (created_at)
      `);
    },
  },
  '0034_previous_hook_secret': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- The relays' hook secret before the last rotation, still taken until it expires (24 h), so that the auth
        -- server can be given the new one without a gap.
        ALTER TABLE clients ADD COLUMN previous_hook_secret text;
        ALTER TABLE clients ADD COLUMN previous_hook_secret_expires_at timestamptz
      `);
    },
  },
  '0035_routes': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- Routes (contract 17): which providers carry a channel's codes to a destination (an E.164 prefix, a country
        -- or 'default'), in failover order. Every instance reads them all and decides in memory.
        CREATE TABLE routes (
          channel text NOT NULL,
          destination text NOT NULL,
          providers text[] NOT NULL,
          weights integer[],
          failover_after_seconds integer,
          policy text NOT NULL DEFAULT 'ordered',
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (channel, destination)
        )
      `);
    },
  },
  '0036_failover_at': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- Delivery-confirmed failover (contract 17): when the latest send goes through the route's next provider
        -- unless a DELIVERED receipt comes first. Polled as next_step_at is, through a partial index that holds
        -- only the sends waiting.
        ALTER TABLE verifications ADD COLUMN failover_at timestamptz;
        CREATE INDEX verifications_failover ON verifications (failover_at) WHERE status = 'PENDING' AND failover_at IS NOT NULL;
      `);
    },
  },
  '0037_prices_and_costs': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- Prices (contract 17, prices import): what a provider charges for a message of a channel to a destination
        -- (an E.164 prefix, a country or default), matched as routes are.
        CREATE TABLE prices (
          provider text NOT NULL,
          channel text NOT NULL,
          destination text NOT NULL,
          currency text NOT NULL,
          price numeric NOT NULL CHECK (price >= 0),
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (provider, channel, destination)
        );
        -- The cost ledger: one row per send a provider took, written with its acceptance. cost is in
        -- COST_CURRENCY (null: unknown); a price the provider reported in another currency is kept beside it.
        -- No number in it: erasing a person's data leaves what was spent.
        CREATE TABLE send_costs (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          verification_id uuid NOT NULL,
          client_id uuid NOT NULL,
          sent_at timestamptz NOT NULL,
          channel text NOT NULL,
          provider text NOT NULL,
          region_code text,
          route text NOT NULL,
          cost numeric,
          reported_amount numeric,
          reported_currency text
        );
        CREATE INDEX send_costs_sent ON send_costs (sent_at);
        CREATE INDEX send_costs_client_sent ON send_costs (client_id, sent_at);
        CREATE INDEX send_costs_verification ON send_costs (verification_id);
      `);
    },
  },
  '0038_cost_report': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- otp-service costs (cost-store.ts) over a million sends in under a second (bench/README.md, costs).
        -- Its verified count joins the ledger to the SUCCESS verifications alone: their ids, read from this index
        -- (13 MB for 420,000) rather than from every verification's row (260 MB for 700,000, more with every day
        -- kept). One more index entry when a code is verified; a verification's status change never was a HOT update.
        CREATE INDEX verifications_success ON verifications (id) WHERE status = 'SUCCESS';
        -- --by day groups by this expression: without its statistics PostgreSQL expects a group per send (those of
        -- sent_at) and aggregates the ledger without parallel workers.
        CREATE STATISTICS send_costs_day ON ((sent_at at time zone 'UTC')::date) FROM send_costs;
      `);
    },
  },
  '0039_client_budgets': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- A client's spend in a UTC day or month (period 'day' | 'month', starts its first day), kept only for a
        -- client with a budget: sends the providers took (at their cost, or the channel's highest price when
        -- unknown) plus the holds below. An admission raises it in one statement under the row's lock, so that
        -- instances together never pass the limit.
        CREATE TABLE client_spend (
          client_id uuid NOT NULL,
          period text NOT NULL CHECK (period IN ('day', 'month')),
          starts date NOT NULL,
          spent numeric NOT NULL DEFAULT 0,
          PRIMARY KEY (client_id, period, starts)
        );
        -- What an admitted create or resend holds of its client's budget until a provider takes the send (then its
        -- cost replaces it) or the verification ends without it (then it is given back). sends: how many admitted
        -- sends the amount is for; day: the UTC day it counts in.
        CREATE TABLE budget_holds (
          verification_id uuid PRIMARY KEY,
          client_id uuid NOT NULL,
          amount numeric NOT NULL,
          sends int NOT NULL,
          day date NOT NULL,
          created_at timestamptz NOT NULL
        );
        CREATE INDEX budget_holds_created ON budget_holds (created_at);
      `);
    },
  },
  '0040_risk_rules': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- Each risk rule's mode (contract 18), service-wide (client_id NULL) or for one client: enforce, shadow
        -- (its factor recorded, nothing refused) or off. A rule with no row enforces.
        CREATE TABLE rule_modes (
          rule text NOT NULL,
          client_id uuid,
          mode text NOT NULL CHECK (mode IN ('enforce', 'shadow', 'off')),
          updated_at timestamptz NOT NULL
        );
        CREATE UNIQUE INDEX rule_modes_scope ON rule_modes (rule, (coalesce(client_id::text, '')));
        -- Why a send was judged risky: { verdict, factors } when a rule objected or a CAPTCHA was asked (NULL: allowed,
        -- nothing objected, as almost every send is).
        ALTER TABLE verifications ADD COLUMN risk jsonb;
        -- otp-service verdicts reads the shadowed sends of a range from these few rows alone.
        CREATE INDEX verifications_risk ON verifications (created_at) WHERE risk IS NOT NULL;
        -- Each create a rule refused (its enforced factors), so that verdicts can tell how many of those numbers
        -- had a code verified later: the cost of a rule in real users. Erased with the number, pruned by RETENTION_DAYS.
        CREATE TABLE risk_refusals (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          client_id uuid NOT NULL,
          phone_number text NOT NULL,
          rule text NOT NULL,
          factor text NOT NULL,
          refused_at timestamptz NOT NULL
        );
        CREATE INDEX risk_refusals_refused ON risk_refusals (refused_at);
        CREATE INDEX risk_refusals_phone ON risk_refusals (phone_number);
      `);
    },
  },
  '0041_network_throttles': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- The mobile network a number's range was given to (number metadata's carrier), where the data names one:
        -- conversion is judged per country and network (contract 18), so that pumping through one network
        -- throttles that network, not its country's others.
        ALTER TABLE verifications ADD COLUMN network text;
        -- '' throttles the numbers of the country whose network is not known (every number, where the data names none).
        ALTER TABLE country_throttles ADD COLUMN network text NOT NULL DEFAULT '';
        ALTER TABLE country_throttles DROP CONSTRAINT country_throttles_pkey;
        ALTER TABLE country_throttles ADD PRIMARY KEY (region_code, country_code, provider, network)
      `);
    },
  },
  '0042_cost_report_day': {
    async up(db: Kysely<unknown>) {
      await runStatements(db, `
        -- otp-service costs --by day now groups by date_bin's UTC midnight (cost-store.ts): the statistics of that
        -- expression, for the same reason as 0038's (without them PostgreSQL expects a group per send and aggregates
        -- without parallel workers). Read by ANALYZE alone: a send writes nothing more.
        CREATE STATISTICS send_costs_day_bin ON (date_bin('1 day', sent_at, '2000-01-01 00:00:00+00')) FROM send_costs;
        -- 0038's statistics of the old expression, which nothing groups by any more.
        DROP STATISTICS send_costs_day
      `);
    },
  },
};

/** Runs DDL one statement at a time: PGlite's extended protocol takes one statement per query. */
async function runStatements(db: Kysely<unknown>, ddl: string): Promise<void> {
  for (const statement of ddl.split(/;\s*\n/)) {
    if (statement.replace(/--.*$/gm, '').trim() !== '') await sql.raw(statement).execute(db);
  }
}

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Every migration this version knows, oldest first. */
export function knownMigrations(): string[] {
  return Object.keys(migrations).sort();
}

/** The migrations a database has had, oldest first (none for a new database). */
export async function appliedMigrations(db: Kysely<any>): Promise<string[]> {
  const { rows: table } = await sql<{ present: boolean }>`SELECT to_regclass('kysely_migration') IS NOT NULL AS present`.execute(db);
  if (!table[0]?.present) return [];
  const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db);
  return rows.map((r) => r.name);
}

/** Brings the schema to `name` exactly (null: none yet), as a restore does before writing a backup's rows. */
export async function migrateTo(db: Kysely<unknown>, name: string | null): Promise<void> {
  const { error, results } = await new Migrator({ db, provider }).migrateTo(name ?? NO_MIGRATIONS);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${String(error)}`, { cause: error });
  }
}

/** Brings the schema up to date. Safe to run from several instances at once (the migrator locks). */
export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${String(error)}`, { cause: error });
  }
}
