import { preparedMark } from './bounded-pool.js';
import { sql, type Selectable, type Transaction } from 'kysely';
import type { CommittedSend } from '../domain/after-commit.js';
import type { OutboxEvent } from '../domain/events.js';
import type { Risk } from '../domain/risk.js';
import type { ThrottledState } from '../domain/conversion.js';
import type { PrefixState } from '../domain/prefix-velocity.js';
import type { SendJob } from '../domain/send-job.js';
import { signalRoom, type SignalKind, type Signals, type SignalState } from '../domain/signals.js';
import type { DeliveryReceipt } from '../domain/send-result.js';
import type { Verification } from '../domain/verification.js';
import type { CreateHistory, CreateHistoryQuery, DueSend, IdempotencyClaim, VerificationTx } from '../domain/verification-store.js';
import { dueForWorkers, eventRow, notifyWorkersSql } from './outbox-rows.js';
import type { Database, VerificationsTable } from './schema.js';
import { isUuid } from './uuid.js';
import { attemptsJson, dueColumn, dueSends, historyOf, sendJobRow, signalColumns, toSendJob, toVerification, verificationRow } from './verification-rows.js';

/** Marks a statement every create sends: it is prepared once per connection, not parsed and planned per group. */
const prepared = sql.raw(`${preparedMark}\n`);

/** What createStates read, by key: `client|phone`, the prefix, `region|calling code`. */
interface CreateStates {
  readonly phones: Map<string, Date[]>;
  readonly prefixes: Map<string, PrefixState>;
  readonly countries: Map<string, ThrottledState>;
  /** By `kind|client|value`. */
  readonly signals: Map<string, SignalState>;
  /** Throttled clients' sends, by client id. */
  readonly clients: Map<string, ThrottledState>;
  /** The asked creates (by their place in the group) whose number, address, network or device verified before. */
  readonly verified: Set<number>;
}

/** The column each signal kind is kept in. */
const signalColumn: Readonly<Record<SignalKind, string>> = { ip: 'signal_ip', network: 'signal_network', device: 'signal_device' };

/** An address is matched within its network, so that the network's partial index finds it. */
const inNetwork = (kind: SignalKind, row: string, asked: string) =>
  kind === 'ip' ? sql`AND ${sql.ref(`${row}.signal_network`)} = ${sql.ref(`${asked}.network`)}` : sql``;

interface Waiting<I, R> {
  readonly item: I;
  readonly resolve: (r: R) => void;
  readonly reject: (err: unknown) => void;
}


/**
 * The database transaction of one group of scripts (see GroupCommit). The scripts run side by side and walk the
 * same steps, so the locks and history reads they ask for go out as one statement each, as soon as no script is
 * still running (each is waiting for the database or done): no timer, no turn of the event loop. Their writes
 * are made together at the end. Round trips per group stay fixed, whatever its size.
 */
export class GroupTransaction {
  private locks: Waiting<readonly string[], void>[] = [];
  private rowLocks: Waiting<string, Selectable<VerificationsTable> | null>[] = [];
  /** Which script of the group locked each row. */
  private readonly rowHolders = new Map<string, object>();
  private messages: Waiting<{ readonly provider: string; readonly account: string; readonly messageId: string }, string | null>[] = [];
  private histories: Waiting<CreateHistoryQuery, CreateHistory>[] = [];
  /** Scripts running JavaScript now (not waiting for the database, not done). */
  private running: number;
  private scheduled = false;
  /** Flushes run one after another: a group's locks must go in one sorted statement, never interleaved. */
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    readonly trx: Transaction<Database>,
    /** PostgreSQL: NOTIFY workers in other processes when events fall due. */
    private readonly notifyOtherProcesses: boolean,
    members: number,
  ) {
    this.running = members;
  }

  /** Advisory locks on every key, taken with the group's others in one statement. */
  lock(keys: readonly string[]): Promise<void> {
    return this.enqueue(this.locks, keys);
  }

  history(query: CreateHistoryQuery): Promise<CreateHistory> {
    return this.enqueue(this.histories, query);
  }

  /** The verification a provider's message was for. */
  providerMessage(provider: string, account: string, messageId: string): Promise<string | null> {
    return this.enqueue(this.messages, { provider, account, messageId });
  }

  /**
   * A verification's row, locked until the transaction ends, for `member`. Two scripts of one group cannot lock
   * one row against each other (they share the transaction), and each would write the row as it read it: the
   * second is refused, which fails the group, and the group commit runs each script again alone, where the
   * row lock does serialize them.
   */
  lockRow(id: string, member: object): Promise<Selectable<VerificationsTable> | null> {
    try {
      this.holdRow(id, member);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return this.enqueue(this.rowLocks, id);
  }

  /** Records that `member` holds a row it locked; throws when another script of the group holds it. */
  holdRow(id: string, member: object): void {
    const holder = this.rowHolders.get(id);
    if (holder !== undefined && holder !== member) throw new Error(`two scripts of one group lock verification ${id}`);
    this.rowHolders.set(id, member);
  }

  /** A statement of one script alone, made at once; the script counts as waiting meanwhile. */
  async alone<R>(run: (trx: Transaction<Database>) => Promise<R>): Promise<R> {
    this.pause();
    try {
      return await run(this.trx);
    } finally {
      this.running += 1;
    }
  }

  /** A script has returned or thrown. */
  done(): void {
    this.pause();
  }

  /** Makes every member's writes, one statement per kind, then lets the transaction commit. */
  async write(members: readonly SqlVerificationTx[]): Promise<void> {
    await this.flushing;
    const inserts = members.flatMap((m) => m.inserts);
    const updates = members.flatMap((m) => m.updates);
    const risks = members.flatMap((m) => m.risks);
    const events = members.flatMap((m) => m.events);
    const sends = members.flatMap((m) => m.sends);
    const savedJobs = members.flatMap((m) => m.savedJobs);
    const blocks = new Map(members.flatMap((m) => m.prefixBlocks).map((b) => [b.prefix, b]));
    const parked = members.flatMap((m) => m.parked);
    const unparked = members.flatMap((m) => m.unparked);
    if (parked.length > 0) {
      await this.trx
        .insertInto('parked_receipts')
        .values(
          parked.map((p) => ({
            provider: p.provider,
            account: p.account,
            message_id: p.receipt.messageId,
            status: p.receipt.status,
            detail: p.receipt.detail,
            reported_at: p.receipt.at,
            received_at: p.at,
          })),
        )
        .execute();
    }
    if (unparked.length > 0) await this.trx.deleteFrom('parked_receipts').where('id', 'in', unparked).execute();
    // Rare (a provider's refund): one statement each, on the ledger's verification index.
    for (const r of members.flatMap((m) => m.refunds)) {
      await this.trx
        .updateTable('send_costs')
        .set({ cost: '0' })
        .where('id', '=', (eb) =>
          eb.selectFrom('send_costs').select('id').where('verification_id', '=', r.verificationId).where('provider', '=', r.provider).orderBy('sent_at', 'desc').orderBy('id', 'desc').limit(1),
        )
        .execute();
    }
    if (blocks.size > 0) {
      await this.trx
        .insertInto('prefix_blocks')
        .values([...blocks.values()].map((b) => ({ prefix: b.prefix, blocked_at: b.at, blocked_until: b.until })))
        .onConflict((oc) => oc.column('prefix').doUpdateSet({ blocked_at: sql`excluded.blocked_at`, blocked_until: sql`excluded.blocked_until` }))
        .execute();
    }
    const counted = new Map<string, { client_id: string; day: string; sends: number }>();
    for (const c of members.flatMap((m) => m.countedSends)) {
      const key = `${c.clientId}|${c.day}`;
      const row = counted.get(key) ?? { client_id: c.clientId, day: c.day, sends: 0 };
      counted.set(key, { ...row, sends: row.sends + 1 });
    }
    if (counted.size > 0) {
      await this.trx
        .insertInto('client_daily_sends')
        .values([...counted.values()])
        .onConflict((oc) => oc.columns(['client_id', 'day']).doUpdateSet({ sends: sql`client_daily_sends.sends + excluded.sends` }))
        .execute();
    }
    // New verifications and their send jobs go in one statement: a create's two inserts, one round trip.
    // The local room's mark only where set: a group without one writes the statement it always did.
    const newRows = inserts.map(({ verification, signals, localRoom }) => ({
      ...verificationRow(verification),
      ...signalColumns(signals),
      ...(localRoom && { local_room: true }),
    }));
    const newJobs = sends.map((s) => sendJobRow(s.job));
    if (newRows.length > 0 && newJobs.length > 0) {
      await this.trx.with('inserted', (db) => db.insertInto('verifications').values(newRows)).insertInto('send_jobs').values(newJobs).execute();
    } else if (newRows.length > 0) {
      await this.trx.insertInto('verifications').values(newRows).execute();
    } else if (newJobs.length > 0) {
      await this.trx.insertInto('send_jobs').values(newJobs).execute();
    }
    if (updates.length > 0) {
      const rows = updates.map(
        (v) => sql`(${v.id}::uuid, ${v.status}::text, ${v.counter}::int, ${v.updatedAt}::timestamptz, ${v.failureReason}::text,
          ${v.sendRequests}::int, ${v.lastSendAt}::timestamptz, ${v.delivery.channel}::text, ${v.delivery.provider}::text, ${v.delivery.messageId}::text, ${v.delivery.status}::text,
          ${v.delivery.sends}::int, ${v.delivery.updatedAt}::timestamptz, ${v.steps}::int, ${v.nextStepAt}::timestamptz, ${v.failoverAt}::timestamptz, ${attemptsJson(v.deliveries)}::jsonb)`,
      );
      await sql`UPDATE verifications v SET status = r.status, counter = r.counter, updated_at = r.updated_at,
          failure_reason = r.failure_reason, send_requests = r.send_requests, last_send_at = r.last_send_at, delivery_channel = r.channel, delivery_provider = r.provider,
          delivery_message_id = r.message_id, delivery_status = r.delivery_status, delivery_sends = r.sends,
          delivery_updated_at = r.delivery_updated_at, steps = r.steps, next_step_at = r.next_step_at, failover_at = r.failover_at, deliveries = r.deliveries
        FROM (VALUES ${sql.join(rows)}) AS r (id, status, counter, updated_at, failure_reason, send_requests, last_send_at, channel, provider, message_id,
          delivery_status, sends, delivery_updated_at, steps, next_step_at, failover_at, deliveries)
        WHERE v.id = r.id`.execute(this.trx);
    }
    if (risks.length > 0) {
      const rows = risks.map((r) => sql`(${r.id}::uuid, ${JSON.stringify(r.risk)}::jsonb)`);
      await sql`UPDATE verifications v SET risk = r.risk FROM (VALUES ${sql.join(rows)}) AS r (id, risk) WHERE v.id = r.id`.execute(this.trx);
    }
    if (savedJobs.length > 0) {
      const rows = savedJobs.map(({ job, at: now }) => {
        const r = sendJobRow(job);
        return sql`(${job.verificationId}::uuid, ${r.status}::text, ${r.channel}::text, ${r.sender}::text, ${r.attempts}::int,
          ${r.provider}::text, ${r.provider_failures}::int, ${r.next_attempt_at}::timestamptz, ${r.last_error}::text, ${now}::timestamptz)`;
      });
      await sql`UPDATE send_jobs j SET status = r.status, channel = r.channel, sender = r.sender, attempts = r.attempts,
          provider = r.provider, provider_failures = r.provider_failures, next_attempt_at = r.next_attempt_at,
          last_error = r.last_error, updated_at = r.updated_at
        FROM (VALUES ${sql.join(rows)}) AS r (verification_id, status, channel, sender, attempts, provider, provider_failures,
          next_attempt_at, last_error, updated_at)
        WHERE j.verification_id = r.verification_id`.execute(this.trx);
    }
    if (events.length > 0) {
      await this.trx.insertInto('events').values(events.map(eventRow)).execute();
      if (this.notifyOtherProcesses && dueForWorkers(events)) await notifyWorkersSql().execute(this.trx);
    }
  }

  private enqueue<I, R>(queue: Waiting<I, R>[], item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      // Counted as running again as soon as its answer is in, before its continuation runs.
      const wake = (): void => {
        this.running += 1;
      };
      queue.push({
        item,
        resolve: (r) => {
          wake();
          resolve(r);
        },
        reject: (err) => {
          wake();
          reject(err);
        },
      });
      this.pause();
    });
  }

  /** One script stopped running; when none runs, what they asked for goes out. */
  private pause(): void {
    this.running -= 1;
    const asked = this.locks.length + this.rowLocks.length + this.histories.length + this.messages.length;
    if (this.running > 0 || this.scheduled || asked === 0) return;
    this.scheduled = true;
    this.flushing = this.flushing.then(() => {
      this.scheduled = false;
      return this.flush();
    });
  }

  /**
   * Everything a group's creates read before they decide, in one statement: each number's recent creates by
   * the client (phone limits), and what the fraud and cost limits ask for (contract 10): each prefix's creates and block (prefix velocity), each throttled country's creates
   * (conversion). Each part has rows to read only when some create asks for it.
   */
  private async createStates(asked: readonly CreateHistoryQuery[]): Promise<CreateStates> {
    const prefixes = asked.flatMap((h) => (h.prefix ? [h.prefix] : []));
    const countries = new Map<string, { regionCode: string; countryCode: string; network: string; since: Date }>();
    for (const h of asked) {
      if (!h.throttled) continue;
      const key = throttledKey(h.throttled);
      const seen = countries.get(key);
      if (!seen || h.throttled.since < seen.since) countries.set(key, h.throttled);
    }
    const lookBackFrom = asked.reduce((min, h) => (h.lookBackFrom < min ? h.lookBackFrom : min), asked[0]?.lookBackFrom ?? new Date());
    // The group's creates share one clock reading to the millisecond or so: the earliest prefix window and the
    // latest time serve all.
    const since = prefixes.reduce((min, p) => (p.since < min ? p.since : min), prefixes[0]?.since ?? new Date(0));
    const now = prefixes.reduce((max, p) => (p.now > max ? p.now : max), prefixes[0]?.now ?? new Date(0));
    const throttled = [...countries.values()];
    const throttledClients = new Map<string, Date>();
    for (const h of asked) {
      if (!h.clientThrottled) continue;
      const seen = throttledClients.get(h.clientId);
      if (!seen || h.clientThrottled.since < seen) throttledClients.set(h.clientId, h.clientThrottled.since);
    }
    // One part per kind of signal. An address is found through its network's partial index (0027 dropped the
    // address's own: one index fewer to write on every create), the network and the device through theirs.
    const signalAsks = (['ip', 'network', 'device'] as const).flatMap((kind) => {
      const asks = asked.flatMap((h) =>
        h.signals.keys.filter((k) => k.kind === kind).map((k) => ({ clientId: h.clientId, value: k.value, network: k.network ?? null, since: h.signals.since })),
      );
      // A kind's limit is the policy's, and the group's creates share one clock reading: one of each serves all.
      const limit = asked.flatMap((h) => h.signals.keys.filter((k) => k.kind === kind).map((k) => k.limit))[0] ?? 0;
      return asks.length === 0 ? [] : [{ kind, asks, limit }];
    });
    const signalParts = signalAsks.map(({ kind, asks }) => {
      const column = (alias: string) => sql.ref(`${alias}.${signalColumn[kind]}`);
      return sql`
      SELECT ${kind}::text, s.client::text || '|' || s.value, (count(v.id) FILTER (WHERE v.status <> 'SUCCESS'))::int,
          NULL, min(v.created_at) FILTER (WHERE v.status <> 'SUCCESS'), (count(v.id) FILTER (WHERE v.status = 'SUCCESS'))::int, 0
        FROM unnest(${asks.map((a) => a.clientId)}::uuid[], ${asks.map((a) => a.value)}::text[], ${asks.map((a) => a.network)}::text[],
            ${asks.map((a) => a.since.toISOString())}::timestamptz[]) AS s (client, value, network, since)
          LEFT JOIN verifications v ON v.client_id = s.client AND ${column('v')} = s.value ${inNetwork(kind, 'v', 's')} AND v.created_at > s.since
            AND NOT v.test_number
        GROUP BY s.client, s.value`;
    });
    // Resends count wherever sends count (contract 14): a prefix's and a throttled country's creates are counted
    // by the sends asked for them (1 at create, 1 more per resend).
    // Each part keeps its own index: phone history the one on (client_id, phone_number, created_at), prefix
    // counts the partial one on (left(phone_number, -3), created_at), country counts the one on (client_id,
    // created_at), client by client over the window. A prefix block that is over (served, or lifted) starts its
    // count afresh.
    // Verified history, asked only by creates a throttle would refuse: each signal its own partial index.
    const historyAsks = asked.flatMap((h, i) => (h.verifiedSince ? [{ i, clientId: h.clientId, phone: h.phoneNumber, ...h.verifiedSince }] : []));
    // An address through its network's index, as the signal counts find it.
    const verifiedOn = (column: string, value: string) =>
      sql`(${sql.ref(`q.${value}`)} IS NOT NULL AND EXISTS (SELECT 1 FROM verifications v WHERE v.client_id = q.client
        AND ${sql.ref(`v.${column}`)} = ${sql.ref(`q.${value}`)} ${column === 'signal_ip' ? sql`AND v.signal_network = q.network` : sql``}
        AND v.created_at > q.since AND v.status = 'SUCCESS'))`;
    // Only the parts some create asks for are in the statement: each costs its planning on every group.
    const parts = [
      sql`
      SELECT 'phone' AS kind, v.client_id::text || '|' || v.phone_number AS key, 0 AS n, NULL::timestamptz AS until,
          v.created_at AS oldest, 0 AS verified, 0 AS unverified
        FROM verifications v
        WHERE (v.client_id, v.phone_number) IN (SELECT * FROM unnest(${asked.map((h) => h.clientId)}::uuid[], ${asked.map((h) => h.phoneNumber)}::text[]))
          AND v.created_at > ${lookBackFrom}`,
      prefixes.length > 0 &&
        sql`
      SELECT 'prefix', p.prefix,
          (SELECT coalesce(sum(v.send_requests), 0)::int FROM verifications v
            WHERE left(v.phone_number, -3) = p.prefix AND NOT v.test_number
              AND v.created_at > greatest(${since}::timestamptz, b.blocked_until)),
          b.blocked_until, NULL, 0, 0
        FROM unnest(${[...new Set(prefixes.map((p) => p.prefix))]}::text[]) AS p (prefix) LEFT JOIN prefix_blocks b ON b.prefix = p.prefix`,
      throttled.length > 0 &&
        sql`
      SELECT 'country', c.region || '|' || c.cc || '|' || c.network, coalesce(sum(v.send_requests), 0)::int, NULL, min(v.created_at),
          (count(v.id) FILTER (WHERE v.status = 'SUCCESS'))::int,
          coalesce(sum(v.send_requests) FILTER (WHERE v.local_room AND v.status <> 'SUCCESS'), 0)::int
        FROM unnest(${throttled.map((c) => c.regionCode)}::text[], ${throttled.map((c) => c.countryCode)}::text[],
            ${throttled.map((c) => c.network)}::text[], ${throttled.map((c) => c.since.toISOString())}::timestamptz[]) AS c (region, cc, network, since)
          LEFT JOIN verifications v ON v.client_id = ANY(ARRAY(SELECT id FROM clients)) AND v.created_at > c.since
            AND v.region_code = c.region AND v.country_code = c.cc AND coalesce(v.network, '') = c.network AND NOT v.test_number
        GROUP BY c.region, c.cc, c.network`,
      throttledClients.size > 0 &&
        sql`
      SELECT 'client', c.client::text, coalesce(sum(v.send_requests), 0)::int, NULL, min(v.created_at), 0, 0
        FROM unnest(${[...throttledClients.keys()]}::uuid[], ${[...throttledClients.values()].map((d) => d.toISOString())}::timestamptz[]) AS c (client, since)
          LEFT JOIN verifications v ON v.client_id = c.client AND v.created_at > c.since AND NOT v.test_number
        GROUP BY c.client`,
      historyAsks.length > 0 &&
        sql`
      SELECT 'verified', q.i::text, 0, NULL, NULL,
          (${verifiedOn('phone_number', 'phone')} OR ${verifiedOn('signal_ip', 'ip')} OR ${verifiedOn('signal_network', 'network')}
            OR ${verifiedOn('signal_device', 'device')})::int, 0
        FROM unnest(${historyAsks.map((q) => q.i)}::int[], ${historyAsks.map((q) => q.clientId)}::uuid[], ${historyAsks.map((q) => q.phone)}::text[],
            ${historyAsks.map((q) => q.ip)}::text[], ${historyAsks.map((q) => q.network)}::text[], ${historyAsks.map((q) => q.device)}::text[],
            ${historyAsks.map((q) => q.since.toISOString())}::timestamptz[]) AS q (i, client, phone, ip, network, device, since)`,
      ...signalParts,
    ].filter((part) => part !== false);
    const { rows } = await sql<{
      kind: 'phone' | 'prefix' | 'country' | 'client' | 'verified' | SignalKind;
      key: string;
      n: number;
      until: Date | null;
      oldest: Date | null;
      verified: number;
      unverified: number;
    }>`${prepared}${sql.join(parts, sql`
      UNION ALL`)}`.execute(this.trx);
    const states: CreateStates = { phones: new Map(), prefixes: new Map(), countries: new Map(), signals: new Map(), clients: new Map(), verified: new Set() };
    const pastTheHour: { kind: SignalKind; clientId: string; value: string; network: string | null }[] = [];
    for (const r of rows) {
      const until = r.until === null ? null : new Date(r.until);
      if (r.kind === 'phone') states.phones.set(r.key, [...(states.phones.get(r.key) ?? []), new Date(r.oldest as Date)]);
      else if (r.kind === 'prefix') states.prefixes.set(r.key, { recentCreates: Number(r.n), blockedUntil: until !== null && until > now ? until : null });
      else if (r.kind === 'client') states.clients.set(r.key, { recentCreates: Number(r.n), oldest: r.oldest === null ? null : new Date(r.oldest) });
      else if (r.kind === 'country')
        states.countries.set(r.key, {
          recentCreates: Number(r.n),
          oldest: r.oldest === null ? null : new Date(r.oldest),
          localRoom: { verified: Number(r.verified), unverified: Number(r.unverified) },
        });
      else if (r.kind === 'verified') {
        if (Number(r.verified) > 0) states.verified.add(Number(r.key));
      } else {
        const state = { recentCreates: Number(r.n), oldest: r.oldest === null ? null : new Date(r.oldest), verified: Number(r.verified), lastDay: null };
        states.signals.set(`${r.kind}|${r.key}`, state);
        const { asks = [], limit = 0 } = signalAsks.find((a) => a.kind === r.kind) ?? {};
        if (state.recentCreates < signalRoom(limit, state.verified)) continue;
        const ask = asks.find((a) => `${a.clientId}|${a.value}` === r.key);
        if (ask) pastTheHour.push({ kind: r.kind, clientId: ask.clientId, value: ask.value, network: ask.network });
      }
    }
    if (pastTheHour.length > 0) await this.readLastDay(states, pastTheHour, asked);
    return states;
  }

  /**
   * A signal the hour would refuse reads its last day too (`hasRoom`: the day's verified creates earn room at the
   * hour's ratio): a statement of its own, in the same transaction and under the same locks, made only for those,
   * so that every other create's read plans none of it.
   */
  private async readLastDay(
    states: CreateStates,
    signals: readonly { kind: SignalKind; clientId: string; value: string; network: string | null }[],
    asked: readonly CreateHistoryQuery[],
  ): Promise<void> {
    const since = asked.reduce((min, h) => (h.signals.historySince < min ? h.signals.historySince : min), asked[0]?.signals.historySince ?? new Date());
    const parts = (['ip', 'network', 'device'] as const).flatMap((kind) => {
      const of = signals.filter((x) => x.kind === kind);
      if (of.length === 0) return [];
      return [
        sql`
      SELECT ${kind}::text AS kind, s.client::text || '|' || s.value AS key, (count(w.id) FILTER (WHERE w.status <> 'SUCCESS'))::int AS unverified,
          (count(w.id) FILTER (WHERE w.status = 'SUCCESS'))::int AS verified
        FROM unnest(${of.map((x) => x.clientId)}::uuid[], ${of.map((x) => x.value)}::text[], ${of.map((x) => x.network)}::text[]) AS s (client, value, network)
          LEFT JOIN verifications w ON w.client_id = s.client AND ${sql.ref(`w.${signalColumn[kind]}`)} = s.value ${inNetwork(kind, 'w', 's')}
            AND w.created_at > ${since} AND NOT w.test_number
        GROUP BY s.client, s.value`,
      ];
    });
    const { rows } = await sql<{ kind: SignalKind; key: string; unverified: number; verified: number }>`${sql.join(parts, sql`
      UNION ALL`)}`.execute(this.trx);
    for (const r of rows) {
      const state = states.signals.get(`${r.kind}|${r.key}`);
      if (state) states.signals.set(`${r.kind}|${r.key}`, { ...state, lastDay: { unverified: Number(r.unverified), verified: Number(r.verified) } });
    }
  }

  private async flush(): Promise<void> {
    const locks = this.locks.splice(0);
    const rowLocks = this.rowLocks.splice(0);
    const histories = this.histories.splice(0);
    const messages = this.messages.splice(0);
    if (messages.length > 0) {
      await settle(messages, async () => {
        const rows = await this.trx
          .selectFrom('provider_messages')
          .select(['provider', 'account', 'message_id', 'verification_id'])
          .where(
            sql<boolean>`(provider, account, message_id) IN (SELECT * FROM unnest(${messages.map((m) => m.item.provider)}::text[], ${messages.map((m) => m.item.account)}::text[], ${messages.map((m) => m.item.messageId)}::text[]))`,
          )
          .execute();
        const key = (provider: string, account: string, messageId: string) => `${provider}\u0000${account}\u0000${messageId}`;
        const byKey = new Map(rows.map((r) => [key(r.provider, r.account, r.message_id), r.verification_id]));
        return messages.map(({ item }) => byKey.get(key(item.provider, item.account, item.messageId)) ?? null);
      });
    }
    if (locks.length > 0) {
      await settle(locks, async () => {
        // In a fixed order, so that groups on other instances cannot deadlock with this one.
        const keys = [...new Set(locks.flatMap((l) => l.item))].sort();
        await sql`${prepared}SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest(${keys}::text[]) AS k ORDER BY k`.execute(this.trx);
        return locks.map(() => undefined);
      });
    }
    if (rowLocks.length > 0) {
      await settle(rowLocks, async () => {
        // Rows after advisory locks, in id order: the one order every group takes its locks in.
        const ids = [...new Set(rowLocks.map((r) => r.item))].sort();
        const rows = await this.trx.selectFrom('verifications').selectAll().where('id', 'in', ids).orderBy('id').forUpdate().execute();
        const byId = new Map(rows.map((r) => [r.id, r]));
        return rowLocks.map((r) => byId.get(r.item) ?? null);
      });
    }
    if (histories.length > 0) {
      await settle(histories, async () => {
        const states = await this.createStates(histories.map((h) => h.item));
        return histories.map(({ item }, i) => ({
          verifiedBefore: states.verified.has(i),
          prefix: item.prefix && (states.prefixes.get(item.prefix.prefix) ?? { recentCreates: 0, blockedUntil: null }),
          throttled: item.throttled && (states.countries.get(throttledKey(item.throttled)) ?? { recentCreates: 0, oldest: null }),
          phone: historyOf(states.phones.get(`${item.clientId}|${item.phoneNumber}`) ?? [], item.lookBackFrom, item.windowFrom),
          clientThrottled: item.clientThrottled && (states.clients.get(item.clientId) ?? { recentCreates: 0, oldest: null }),
          signals: item.signals.keys.map((k) => states.signals.get(`${k.kind}|${item.clientId}|${k.value}`) ?? { recentCreates: 0, oldest: null, verified: 0 }),
        }));
      });
    }
  }
}

/** A throttled country's network as the group's read keys it. */
function throttledKey(t: { readonly regionCode: string; readonly countryCode: string; readonly network: string }): string {
  return `${t.regionCode}|${t.countryCode}|${t.network}`;
}

/** Runs one batched statement and settles every waiting call with its result, or with its error. */
async function settle<I, R>(waiting: readonly Waiting<I, R>[], run: () => Promise<readonly R[]>): Promise<void> {
  try {
    const results = await run();
    waiting.forEach((w, i) => w.resolve(results[i] as R));
  } catch (err) {
    for (const w of waiting) w.reject(err);
  }
}

/** One script's view of its group's transaction: reads and locks go through the group, writes wait for the end. */
export class SqlVerificationTx implements VerificationTx {
  readonly inserts: { readonly verification: Verification; readonly signals: Signals | null; readonly localRoom: boolean }[] = [];
  readonly updates: Verification[] = [];
  readonly risks: { readonly id: string; readonly risk: Risk }[] = [];
  readonly events: OutboxEvent[] = [];
  readonly sends: CommittedSend[] = [];
  readonly savedJobs: { readonly job: SendJob; readonly verification: Verification | null; readonly at: Date }[] = [];
  readonly countedSends: { readonly clientId: string; readonly day: string }[] = [];
  readonly parked: { readonly provider: string; readonly account: string; readonly receipt: DeliveryReceipt; readonly at: Date }[] = [];
  readonly unparked: string[] = [];
  readonly refunds: { readonly verificationId: string; readonly provider: string }[] = [];
  readonly prefixBlocks: { readonly prefix: string; readonly at: Date; readonly until: Date }[] = [];

  constructor(private readonly group: GroupTransaction) {}

  lock(keys: readonly string[]): Promise<void> {
    return this.group.lock(keys);
  }

  blockPrefix(prefix: string, at: Date, until: Date): void {
    this.prefixBlocks.push({ prefix, at, until });
  }

  phoneHistory(query: CreateHistoryQuery): Promise<CreateHistory> {
    return this.group.history(query);
  }

  countSend(clientId: string, day: string): void {
    this.countedSends.push({ clientId, day });
  }

  async claimIdempotencyKey(
    clientId: string,
    key: string,
    fingerprint: string,
    verificationId: string,
    now: Date,
    staleBefore: Date,
  ): Promise<IdempotencyClaim> {
    return this.group.alone(async (trx) => {
    // The upsert waits on a concurrent claim of the same key; a stale record is taken over.
    const claimed = await trx
      .insertInto('idempotency_keys')
      .values({ client_id: clientId, key, fingerprint, verification_id: verificationId, created_at: now })
      .onConflict((oc) =>
        oc
          .columns(['client_id', 'key'])
          .doUpdateSet({ fingerprint, verification_id: verificationId, created_at: now })
          .where('idempotency_keys.created_at', '<', staleBefore),
      )
      .returning('key')
      .executeTakeFirst();
    if (claimed) return { kind: 'claimed' };
    const existing = await trx
      .selectFrom('idempotency_keys')
      .select(['fingerprint', 'verification_id'])
      .where('client_id', '=', clientId)
      .where('key', '=', key)
      .executeTakeFirstOrThrow();
    return { kind: 'existing', fingerprint: existing.fingerprint, verificationId: existing.verification_id } as const;
    });
  }

  async releaseIdempotencyKey(clientId: string, key: string): Promise<void> {
    await this.group.alone((trx) => trx.deleteFrom('idempotency_keys').where('client_id', '=', clientId).where('key', '=', key).execute());
  }

  async findForUpdate(id: string, clientId?: string): Promise<Verification | null> {
    if (!isUuid(id)) return null;
    const row = await this.group.lockRow(id, this);
    return row && row.erased_at === null && (clientId === undefined || row.client_id === clientId) ? toVerification(row) : null;
  }

  async lockDue(now: Date, limit: number): Promise<Verification[]> {
    const rows = await this.group.alone((trx) =>
      trx
        .selectFrom('verifications')
        .selectAll()
        .where('status', '=', 'PENDING')
        .where('expires_at', '<=', now)
        .orderBy('expires_at')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute(),
    );
    // SKIP LOCKED does not skip rows this same transaction locked for another script of the group.
    for (const row of rows) this.group.holdRow(row.id, this);
    return rows.map(toVerification);
  }

  async lockDueSends(kind: DueSend, now: Date, limit: number): Promise<{ verification: Verification; job: SendJob | null }[]> {
    const { rows, jobs } = await this.group.alone(async (trx) => {
      const rows = await dueSends(trx.selectFrom('verifications').selectAll().where('status', '=', 'PENDING'), kind, now)
        .orderBy(dueColumn[kind])
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
      // Their jobs in one read, locked after the rows, in the order every script takes them.
      const jobs =
        rows.length === 0
          ? []
          : await trx.selectFrom('send_jobs').selectAll().where('verification_id', 'in', rows.map((r) => r.id)).forUpdate().execute();
      return { rows, jobs };
    });
    for (const row of rows) this.group.holdRow(row.id, this);
    const byId = new Map(jobs.map((j) => [j.verification_id, toSendJob(j, null)]));
    return rows.map((r) => ({ verification: toVerification(r), job: byId.get(r.id) ?? null }));
  }

  async resendUser(clientId: string, id: string, since: Date): Promise<{ readonly known: boolean; readonly address: string | null }> {
    // Each signal through its own index, as the create's verified history finds it (an address through its network).
    const verifiedOn = (match: ReturnType<typeof sql>) =>
      sql`EXISTS (SELECT 1 FROM verifications v WHERE v.client_id = me.client_id AND ${match} AND v.created_at > ${since} AND v.status = 'SUCCESS')`;
    const row = await this.group.alone(async (trx) => {
      const { rows } = await sql<{ known: boolean; address: string | null }>`
        SELECT (${verifiedOn(sql`v.phone_number = me.phone_number`)}
            OR (me.signal_ip IS NOT NULL AND ${verifiedOn(sql`v.signal_ip = me.signal_ip AND v.signal_network = me.signal_network`)})
            OR (me.signal_network IS NOT NULL AND ${verifiedOn(sql`v.signal_network = me.signal_network`)})
            OR (me.signal_device IS NOT NULL AND ${verifiedOn(sql`v.signal_device = me.signal_device`)})) AS known, me.signal_ip AS address
          FROM verifications me WHERE me.id = ${id} AND me.client_id = ${clientId}`.execute(trx);
      return rows[0];
    });
    return { known: row?.known === true, address: row?.address ?? null };
  }

  async findSendJob(verificationId: string): Promise<SendJob | null> {
    const row = await this.group.alone((trx) =>
      trx.selectFrom('send_jobs').selectAll().where('verification_id', '=', verificationId).forUpdate().executeTakeFirst(),
    );
    return row ? toSendJob(row, null) : null;
  }

  findProviderMessage(provider: string, account: string, messageId: string): Promise<string | null> {
    return this.group.providerMessage(provider, account, messageId);
  }

  saveSendJob(job: SendJob, verification: Verification | null, at: Date): void {
    this.savedJobs.push({ job, verification, at });
  }

  insert(v: Verification, signals: Signals | null = null, localRoom = false): void {
    this.inserts.push({ verification: v, signals, localRoom });
  }

  parkReceipt(provider: string, account: string, receipt: DeliveryReceipt, at: Date): void {
    this.parked.push({ provider, account, receipt, at });
  }

  unpark(id: string): void {
    this.unparked.push(id);
  }

  refundSend(verificationId: string, provider: string): void {
    this.refunds.push({ verificationId, provider });
  }

  update(v: Verification): void {
    this.updates.push(v);
  }

  updateRisk(id: string, risk: Risk): void {
    this.risks.push({ id, risk });
  }

  record(events: readonly OutboxEvent[]): void {
    this.events.push(...events);
  }

  enqueueSend(job: SendJob, verification: Verification): void {
    this.sends.push({ job, verification });
  }
}
