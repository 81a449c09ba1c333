import type { OutboxEvent } from './events.js';
import type { LimitDecision, PhoneHistory } from './limits.js';
import type { Verification } from './verification.js';

/** A channel a code goes out on. */
export type Channel = 'sms' | 'call';

/** What claiming an Idempotency-Key found. */
export type IdempotencyClaim =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'existing'; readonly fingerprint: string; readonly verificationId: string };

/** A verification to create if the phone limits allow it (see VerificationStore.createIfAllowed). */
export interface LimitedCreate {
  readonly verification: Verification;
  readonly channel: Channel;
  /** E.164 the code is sent from. */
  readonly sender: string;
  /** As in VerificationTx.enqueueSend. */
  readonly claimedUntil: Date | null;
  /** The number's history is read from here on (PhoneHistory.latest) ... */
  readonly lookBackFrom: Date;
  /** ... and counted from here on (PhoneHistory.countInWindow). */
  readonly windowFrom: Date;
  /** The limit rule: given the number's history, may this one be created? */
  readonly decide: (history: PhoneHistory) => LimitDecision;
}

/** The writes and locked reads of one verification transaction. */
export interface VerificationTx {
  /** Serialises creates of one number by one client, across every instance, until the transaction ends. */
  lockPhone(clientId: string, phoneNumber: string): Promise<void>;
  phoneHistory(clientId: string, phoneNumber: string, lookBackFrom: Date, windowFrom: Date): Promise<PhoneHistory>;
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
  insert(v: Verification): Promise<void>;
  /**
   * Schedules the durable job that sends the code from `sender` (E.164): due at once, or, when the caller
   * makes the first attempt itself, held for it until `claimedUntil` (that attempt is then attempt 1).
   */
  enqueueSend(verificationId: string, channel: Channel, sender: string, now: Date, claimedUntil: Date | null): Promise<void>;
  /** Reads a verification (of `clientId` when given) and locks it until the transaction ends. */
  findForUpdate(id: string, clientId?: string): Promise<Verification | null>;
  update(v: Verification): Promise<void>;
  /** Moves due PENDING verifications to EXPIRED, skipping rows other transactions hold; returns them. */
  expireDue(now: Date, limit: number): Promise<Verification[]>;
  recordEvents(events: readonly OutboxEvent[]): Promise<void>;
}

/** Storage of verifications (port). */
export interface VerificationStore {
  /**
   * Moves a verification from `previous` (as read) to `next` with its events, atomically, unless another
   * change got there first (optimistic: nothing is locked between the read and this write). True when saved.
   */
  saveIfUnchanged(previous: Verification, next: Verification, events: readonly OutboxEvent[]): Promise<boolean>;
  /**
   * Creates the verification and its send job if `decide` allows it on the number's history, with the number
   * locked against concurrent creates on every instance. Concurrent calls may be committed together (group
   * commit); each is decided in turn, seeing the ones before it.
   */
  createIfAllowed(create: LimitedCreate): Promise<LimitDecision>;
  /** Runs `work` in one transaction: all its writes commit together or not at all. */
  transaction<T>(work: (tx: VerificationTx) => Promise<T>): Promise<T>;
  find(clientId: string, id: string): Promise<Verification | null>;
  /** Any client's verification, for the workers. */
  findById(id: string): Promise<Verification | null>;
}
