import type { Risk } from './risk.js';
import type { CommitEffects } from './after-commit.js';
import type { Amount, Money } from './money.js';
import type { OutboxEvent } from './events.js';
import type { PhoneHistory } from './limits.js';
import type { ThrottledState } from './conversion.js';
import type { PrefixState } from './prefix-velocity.js';
import type { SendJob } from './send-job.js';
import type { Channel } from './channel-driver.js';
import type { Delivery, Verification } from './verification.js';
import type { SignalKind, Signals, SignalState } from './signals.js';
import type { DeliveryReceipt } from './send-result.js';

/** What a create reads before it decides: the number's history, its prefix, its throttles and signals. */
export interface CreateHistory {
  readonly phone: PhoneHistory;
  /** Null when not asked. */
  readonly prefix: PrefixState | null;
  /** A throttled country's creates; null when not asked. */
  readonly throttled: ThrottledState | null;
  /** The client's sends under its conversion throttle (contract 14); null when not asked. */
  readonly clientThrottled: ThrottledState | null;
  /** Each asked signal's creates by the client still holding their place, in the order asked. */
  readonly signals: readonly SignalState[];
  /** With `verifiedSince`: the number, address, network or device had a code of the client's verified since then. */
  readonly verifiedBefore: boolean;
}

/** What a create asks for its history: the prefix read goes out with the others, in the same group flush. */
export interface CreateHistoryQuery {
  readonly clientId: string;
  readonly phoneNumber: string;
  readonly lookBackFrom: Date;
  readonly windowFrom: Date;
  /**
   * Asked by a create a throttle would refuse: whether the client had a code of this number, or from this
   * address, network or device (null: not given), verified since `since`.
   */
  readonly verifiedSince?: { readonly ip: string | null; readonly network: string | null; readonly device: string | null; readonly since: Date } | null;
  /** The prefix whose creates since `since` (and block in force at `now`) are read too; null: none. */
  readonly prefix: { readonly prefix: string; readonly since: Date; readonly now: Date } | null;
  /**
   * A throttled country and network (conversion, contracts 10 and 18; network '' for the country's numbers of no
   * known network) whose creates since `since` are read too, with those of its local room among them: how many were
   * verified, and the sends of the others; null: none.
   */
  readonly throttled: { readonly regionCode: string; readonly countryCode: string; readonly network: string; readonly since: Date } | null;
  /** The client is throttled for its conversion across all countries: its sends since `since` are read too. */
  readonly clientThrottled: { readonly since: Date } | null;
  /**
   * Signals (contract 14) whose creates by the client since `since`, verified ones and test numbers aside, are
   * read too; empty: none.
   */
  readonly signals: {
    readonly keys: readonly { readonly kind: SignalKind; readonly value: string; readonly limit: number; readonly network?: string }[];
    readonly since: Date;
    /** A signal the hour would refuse has its creates since then read too (`SignalState.lastDay`). */
    readonly historySince: Date;
  };
}

/** What claiming an Idempotency-Key found. */
export type IdempotencyClaim =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'existing'; readonly fingerprint: string; readonly verificationId: string };

/**
 * One locking transaction, as a transaction script sees it. Reads and locks are awaited; writes are recorded
 * and made together when the script returns, just before the commit, so that a change, its events and its send
 * jobs commit together or not at all.
 */
export interface VerificationTx {
  /**
   * Advisory locks on these names (lockKeys), held across every instance until the transaction ends; a group
   * takes all its scripts' locks in one sorted statement.
   */
  lock(keys: readonly string[]): Promise<void>;
  /**
   * Creation times of the number's verifications by this client, as the limit rule reads them; with `prefix`, the creates towards it (every client's, test
   * numbers aside) and its block. Lock what is read first for exact counts across instances.
   */
  phoneHistory(query: CreateHistoryQuery): Promise<CreateHistory>;
  /** Blocks a prefix until `until`, written with the rest of the transaction (and kept when a create is refused). */
  blockPrefix(prefix: string, at: Date, until: Date): void;
  /**
   * Counts one send of the client on `day`, written with the rest of the transaction, past CLIENT_DAILY_SEND_LIMIT
   * if need be (a workflow step: its verification's first send was admitted already).
   */
  countSend(clientId: string, day: string): void;
  /**
   * Records that `key` made `verificationId`, unless a record newer than `staleBefore` exists; a concurrent
   * claim of the same key waits for this transaction to end.
   */
  claimIdempotencyKey(
    clientId: string,
    key: string,
    fingerprint: string,
    verificationId: string,
    now: Date,
    staleBefore: Date,
  ): Promise<IdempotencyClaim>;
  /** Forgets a key this transaction claimed, for a request that ends refused. */
  releaseIdempotencyKey(clientId: string, key: string): Promise<void>;
  /** Reads a verification (of `clientId` when given) and locks it until the transaction ends. */
  findForUpdate(id: string, clientId?: string): Promise<Verification | null>;
  /** PENDING verifications whose time is up, oldest first, locked; rows other transactions hold are skipped. */
  lockDue(now: Date, limit: number): Promise<Verification[]>;
  /**
   * PENDING verifications in time whose workflow step (`step`: nextStepAt) or delivery-confirmed failover
   * (`failover`: failoverAt) fell due, oldest due first, locked with their send jobs; rows other transactions
   * hold are skipped.
   */
  lockDueSends(kind: DueSend, now: Date, limit: number): Promise<{ readonly verification: Verification; readonly job: SendJob | null }[]>;
  /**
   * Verification `id`'s user as a held resend judges them: `known` when another code of the client was verified
   * since `since` for the same number, or from the address, network or device this one was created with; and the
   * address it was created with (null when none was given).
   */
  resendUser(clientId: string, id: string, since: Date): Promise<{ readonly known: boolean; readonly address: string | null }>;
  /** A verification's send job, locked until the transaction ends. */
  findSendJob(verificationId: string): Promise<SendJob | null>;
  /** The verification a provider's message (of `account`) was for; null when no send has that id. */
  findProviderMessage(provider: string, account: string, messageId: string): Promise<string | null>;
  /**
   * Writes a new verification, with the signals its create came with (kept beside it, never shown), and whether a
   * country throttle let it through by its local room (counted by that room).
   */
  insert(v: Verification, signals?: Signals | null, localRoom?: boolean): void;
  /** Writes a verification's new state (one read or locked by this transaction). */
  update(v: Verification): void;
  /**
   * Writes a verification's `risk` (contract 18: a resend's factors join its create's), beside `update`, which
   * leaves it alone: a statement of its own, made only when some script of the group asks for one.
   */
  updateRisk(id: string, risk: Risk): void;
  record(events: readonly OutboxEvent[]): void;
  /** Writes a new verification's send job. */
  enqueueSend(job: SendJob, verification: Verification): void;
  /** Writes a send job's new state (one read or claimed before); `verification` goes with it to the dispatcher. */
  saveSendJob(job: SendJob, verification: Verification | null, at: Date): void;
  /**
   * Sets the cost of the verification's latest send through `provider` to 0 in the cost ledger (the provider
   * refunded it), written with the transaction.
   */
  refundSend(verificationId: string, provider: string): void;
  /** Keeps a receipt whose send is not known yet (its acceptance not committed), written with the transaction. */
  parkReceipt(provider: string, account: string, receipt: DeliveryReceipt, at: Date): void;
  /** Forgets a kept receipt once applied, written with the transaction. */
  unpark(id: string): void;
}

/** A receipt kept until the acceptance of its send is committed. */
export interface ParkedReceipt {
  readonly id: string;
  readonly provider: string;
  readonly account: string;
  readonly receipt: DeliveryReceipt;
}

/** An optimistic transaction: nothing is locked; its one save is made only if nobody changed what was read. */
export interface OptimisticTx {
  /** A verification as it is now, or null (another client's is null too). */
  find(clientId: string, id: string): Promise<Verification | null>;
  /** Moves `previous` (as read) to `next`, with its events, if it is still as read when the script ends. */
  save(previous: Verification, next: Verification, events: readonly OutboxEvent[]): void;
}

/** A send that falls due by the clock: a workflow's next step, or a delivery-confirmed failover (contract 13, 17). */
export type DueSend = 'step' | 'failover';

/**
 * A provider took a code (DeliveryService.recordSendOutcome decided so): the latest send reads SENT with its
 * provider and message id, one more send is counted, the job is done, and the message id is kept for receipts:
 * an id already kept for another send (an SMSC that numbers its messages again after a restart) is taken over by
 * this one, the newest, so that receipts never reach an older verification.
 */
export interface SentRecord {
  readonly verificationId: string;
  /**
   * The channel the job sent through, and how the record names it: an acceptance of a send made before a
   * workflow step moved the verification to another channel (a resend or failover in flight then) is kept for
   * its receipts, but moves neither the new step's delivery nor its job.
   */
  readonly channel: Channel;
  readonly deliveryChannel: Delivery['channel'];
  readonly provider: string;
  /** The account or bind the message id is unique within (Provider.account; '' for none). */
  readonly account: string;
  readonly messageId: string;
  /** The send attempt that got the id (the job's attempt count). */
  readonly attempt: number;
  /**
   * The calls of this provider's turn, this one included: above 1, the record's latest attempt is this turn's,
   * retried, and this acceptance ends it (keeping its last error).
   */
  readonly turnAttempts: number;
  /** SENT, or DELIVERED when the provider knew at once that it arrived. */
  readonly status: 'SENT' | 'DELIVERED';
  readonly at: Date;
  /** When the send goes through the route's next provider without a DELIVERED receipt (Verification.failoverAt); null: never. */
  readonly failoverAt: Date | null;
  /** What it cost in COST_CURRENCY (contract 17): the provider's reported price, else the imported one; null: unknown. */
  readonly cost: Amount | null;
  /**
   * What it counts as against its client's budget (contract 17): its cost, or the channel's highest imported price
   * when that is unknown. It replaces the hold its admission made, if any.
   */
  readonly charge: Amount;
  /** The price the provider reported, in whatever currency it said (kept in the ledger even when it is not ours). */
  readonly reported: Money | null;
  /** The destination of the route it went by (`default` for the channel's provider list), for `costs --by route`. */
  readonly route: string;
}

/** What recording an acceptance found. */
export interface SentWritten {
  /** The verification the message id was kept for until now, when another send had it; else null. */
  readonly tookIdFrom: string | null;
  /** True when receipts for the message came before this acceptance and are kept (parked) for it. */
  readonly parked: boolean;
}

/** What a transaction script returned, and what its transaction committed beside the state change. */
export interface Committed<T> extends CommitEffects {
  readonly value: T;
}

/** Storage of verifications (port): transaction runners for the domain's scripts, and reads. */
export interface VerificationStore {
  /**
   * Runs `script` in a locking transaction and commits its writes. Concurrent scripts may share one database
   * transaction (group commit), their reads, locks and writes batched into one statement each; two scripts with
   * a key in common never share one. A script that throws rolls back only itself.
   */
  transaction<T>(script: (tx: VerificationTx) => Promise<T>, serializeOn?: readonly string[]): Promise<Committed<T>>;
  /**
   * Runs `script` optimistically: its reads take no lock and its save is made at the end, in one statement
   * shared with concurrent saves. When the save finds the verification changed meanwhile, the script runs again
   * on what is there now (at most `rounds` times; the domain bounds how often that can happen).
   */
  optimistic<T>(script: (tx: OptimisticTx) => Promise<T>, rounds: number): Promise<Committed<T>>;
  /**
   * Writes what a provider's acceptance changes (SentRecord), reading and locking nothing: it touches only the
   * delivery and the job, which nothing else moves while a send is under way. Concurrent ones share one statement.
   */
  recordSent(sent: SentRecord): Promise<SentWritten>;
  /** A client's verification; another client's reads as null. Concurrent reads share one query. */
  find(clientId: string, id: string): Promise<Verification | null>;
  /** Any client's verification, for the workers. */
  findById(id: string): Promise<Verification | null>;
  /**
   * Whether some PENDING verification is due at `now`: its time up (`expiry`) or its workflow step fallen due
   * (`step`). A plain read, no transaction and no lock, so that an idle poll costs one indexed lookup.
   */
  anyDue(kind: 'expiry' | DueSend, now: Date): Promise<boolean>;
  /**
   * The PENDING verifications whose step or failover (`kind`) fell due at `now`, oldest due first, as lockDueSends
   * would lock them: a plain read, no lock, for what is asked before the transaction (a carrier check).
   */
  readDue(kind: DueSend, now: Date, limit: number): Promise<Verification[]>;
  /**
   * A client's newest verification of a number (E.164), else null: a check by number (the Twilio-shaped surface,
   * contract 15) names no id, and uses only the newest (contract 20), whatever became of it.
   */
  latestOfNumber(clientId: string, phoneNumber: string): Promise<Verification | null>;
  /**
   * Kept receipts, oldest first: those of one message, or (no `message`) those whose send is known by now.
   */
  parkedReceipts(limit: number, message?: { readonly provider: string; readonly account: string; readonly messageId: string }): Promise<ParkedReceipt[]>;
}
