import { eventFor, webhookPayload, type OutboxEvent } from './events.js';
import { decidePhoneLimit, phoneLookBackSeconds, type PhoneLimitPolicy } from './limits.js';
import type { PhoneNumber } from './phone.js';
import { parsePhone } from './phone.js';
import type { Clock, Random } from './ports.js';
import { channelFor } from './channels.js';
import {
  asOf,
  decideVerify,
  numericCode,
  typeForRequest,
  type RequestType,
  type Verification,
} from './verification.js';
import type { VerificationStore, VerificationTx } from './verification-store.js';

/** The rules a verification lives by, from the settings. */
export interface VerificationPolicy {
  readonly ttlSeconds: number;
  readonly codeLength: number;
  readonly maxAttempts: number;
  readonly phoneLimit: PhoneLimitPolicy;
  /** How long an Idempotency-Key is remembered. */
  readonly idempotencySeconds: number;
}

/** Where a code is sent from: the SMS sender number, and caller ids for dropped calls. */
export interface SenderIdentity {
  readonly smsSender: PhoneNumber;
  /** A random caller id from the configured ranges. */
  pickCallerId(random: Random): PhoneNumber;
}

/**
 * Sends a new verification's code straight from the process that created it, so the send costs no queue
 * read. The durable job is written claimed for `claimSeconds`: if this process dies first, the job falls
 * due and any worker sends it.
 */
export interface ImmediateSender {
  readonly claimSeconds: number;
  start(verification: Verification, sender: string): void;
}

export interface CreateRequest {
  readonly clientId: string;
  readonly countryCode: string;
  readonly phoneNumber: string;
  readonly type: RequestType;
  readonly webhookUrl: string | null;
  readonly reference: string | null;
  /** The Idempotency-Key and a fingerprint of the request body, when the client sent a key. */
  readonly idempotency: { readonly key: string; readonly fingerprint: string } | null;
}

export type CreateOutcome =
  | { readonly kind: 'created'; readonly verification: Verification }
  /** The same Idempotency-Key and body again: the first response, nothing sent. */
  | { readonly kind: 'replayed'; readonly verification: Verification }
  | { readonly kind: 'invalid-phone' }
  | { readonly kind: 'rate-limited'; readonly retryAfterSeconds: number }
  | { readonly kind: 'idempotency-key-reused' };

export type VerifyOutcome =
  | { readonly kind: 'success'; readonly verification: Verification }
  | { readonly kind: 'mismatch'; readonly verification: Verification }
  | { readonly kind: 'not-pending'; readonly verification: Verification }
  | { readonly kind: 'not-found' };

/** Creates, reads and checks verifications; every state change and its event commit together. */
export class VerificationService {
  constructor(
    private readonly store: VerificationStore,
    private readonly policy: VerificationPolicy,
    private readonly senders: SenderIdentity,
    private readonly clock: Clock,
    private readonly random: Random,
    /** After a create commits: sends the code at once, or else wakes the send worker (null: nothing). */
    private readonly afterCreate: ImmediateSender | (() => void) | null = null,
  ) {}

  async create(request: CreateRequest): Promise<CreateOutcome> {
    const phone = parsePhone(request.countryCode, request.phoneNumber);
    if (!phone) return { kind: 'invalid-phone' };
    const now = this.clock.now();
    const { verification, sender } = this.newVerification(request, phone, now);
    const { phoneLimit } = this.policy;
    const immediate = typeof this.afterCreate === 'object' ? this.afterCreate : null;
    const claimedUntil = immediate ? new Date(now.getTime() + immediate.claimSeconds * 1000) : null;
    const outcome = request.idempotency
      ? await this.createIdempotent(request, request.idempotency, verification, sender, claimedUntil)
      : await this.store
          .createIfAllowed({
            verification,
            channel: channelFor[verification.type],
            sender: sender.e164,
            claimedUntil,
            lookBackFrom: secondsBefore(now, phoneLookBackSeconds(phoneLimit)),
            windowFrom: secondsBefore(now, phoneLimit.windowSeconds),
            decide: (history) => decidePhoneLimit(history, now, phoneLimit),
          })
          .then(
            (limit): CreateOutcome =>
              limit.allowed
                ? { kind: 'created', verification }
                : { kind: 'rate-limited', retryAfterSeconds: limit.retryAfterSeconds },
          );
    if (outcome.kind === 'created') {
      if (typeof this.afterCreate === 'function') this.afterCreate();
      else this.afterCreate?.start(outcome.verification, sender.e164);
    }
    return outcome;
  }

  /**
   * A create with an Idempotency-Key, in a transaction of its own: the key is claimed first, so a repeat
   * waits for the first to commit and then replays it; a refused create leaves no key behind.
   */
  private createIdempotent(
    request: CreateRequest,
    idempotency: NonNullable<CreateRequest['idempotency']>,
    verification: Verification,
    sender: PhoneNumber,
    claimedUntil: Date | null,
  ): Promise<CreateOutcome> {
    const now = verification.createdAt;
    return this.store.transaction(async (tx): Promise<CreateOutcome> => {
      const claim = await tx.claimIdempotencyKey(
        request.clientId,
        idempotency.key,
        idempotency.fingerprint,
        verification.id,
        now,
        secondsBefore(now, this.policy.idempotencySeconds),
      );
      if (claim.kind === 'existing') return this.replay(tx, request, claim.fingerprint, claim.verificationId);
      await tx.lockPhone(request.clientId, verification.phoneNumber);
      const { phoneLimit } = this.policy;
      const history = await tx.phoneHistory(
        request.clientId,
        verification.phoneNumber,
        secondsBefore(now, phoneLookBackSeconds(phoneLimit)),
        secondsBefore(now, phoneLimit.windowSeconds),
      );
      const limit = decidePhoneLimit(history, now, phoneLimit);
      if (!limit.allowed) {
        // Nothing of this request may stay, the key included: roll back by throwing a value we catch below.
        throw new RollBack({ kind: 'rate-limited', retryAfterSeconds: limit.retryAfterSeconds });
      }
      await tx.insert(verification);
      await tx.enqueueSend(verification.id, channelFor[verification.type], sender.e164, now, claimedUntil);
      return { kind: 'created', verification };
    }).catch((err: unknown) => {
      if (err instanceof RollBack) return err.outcome;
      throw err;
    });
  }

  /** A client's verification as it reads now (a PENDING one past its time reads EXPIRED). */
  async fetch(clientId: string, id: string): Promise<Verification | null> {
    const v = await this.store.find(clientId, id);
    return v ? asOf(v, this.clock.now()) : null;
  }

  /**
   * Checks a code. Optimistic: read, decide, then save only if nobody changed the verification meanwhile;
   * if someone did, decide again on what they left. Two round trips and one commit, no lock held across them.
   */
  async verify(clientId: string, id: string, code: string): Promise<VerifyOutcome> {
    // Each lost race means another call moved the counter or ended the verification, which can happen
    // only a bounded number of times (OTP_MAX_ATTEMPTS), so this loop ends; the bound guards a broken store.
    for (let round = 0; round <= this.policy.maxAttempts + 2; round++) {
      const current = await this.store.find(clientId, id);
      if (!current) return { kind: 'not-found' };
      const decision = decideVerify(current, code, this.clock.now(), this.policy.maxAttempts);
      if (decision.kind === 'not-pending') {
        // Record an expiry the sweep has not reached yet, so that its event is not lost or late.
        const unrecorded = decision.current.status === 'EXPIRED' && current.status === 'PENDING';
        if (unrecorded && !(await this.store.saveIfUnchanged(current, decision.current, this.eventsFor(decision.current)))) {
          continue;
        }
        return { kind: 'not-pending', verification: decision.current };
      }
      if (await this.store.saveIfUnchanged(current, decision.next, this.eventsFor(decision.next))) {
        return { kind: decision.kind, verification: decision.next };
      }
    }
    throw new Error(`verification ${id} kept changing under verify`);
  }

  /** Records EXPIRED on due verifications, with their events; returns how many it moved. */
  async expireDue(limit = 500): Promise<number> {
    const now = this.clock.now();
    return this.store.transaction(async (tx) => {
      const expired = await tx.expireDue(now, limit);
      await tx.recordEvents(expired.flatMap((v) => this.eventsFor(v)));
      return expired.length;
    });
  }

  /** Marks a verification FAILED because its code could not be delivered. */
  async failDelivery(id: string): Promise<Verification | null> {
    return this.store.transaction(async (tx) => {
      const current = await tx.findForUpdate(id);
      if (!current || current.status !== 'PENDING') return current;
      const failed: Verification = { ...current, status: 'FAILED', updatedAt: this.clock.now() };
      await this.saveChange(tx, failed);
      return failed;
    });
  }

  private async saveChange(tx: VerificationTx, next: Verification): Promise<void> {
    await tx.update(next);
    await tx.recordEvents(this.eventsFor(next));
  }

  private eventsFor(v: Verification): OutboxEvent[] {
    const kind = eventFor(v.status);
    if (!kind) return [];
    return [
      {
        id: this.random.uuid(),
        clientId: v.clientId,
        verificationId: v.id,
        kind,
        payload: webhookPayload(kind, v),
        webhookUrl: v.webhookUrl,
        createdAt: v.updatedAt,
      },
    ];
  }

  private async replay(
    tx: VerificationTx,
    request: CreateRequest,
    fingerprint: string,
    verificationId: string,
  ): Promise<CreateOutcome> {
    if (fingerprint !== request.idempotency?.fingerprint) return { kind: 'idempotency-key-reused' };
    // Read inside the open transaction: the embedded database has one session, so a read beside it would wait forever.
    const first = await tx.findForUpdate(verificationId, request.clientId);
    if (!first) throw new Error(`idempotency key points at missing verification ${verificationId}`);
    // The first response showed the record as created; show it again exactly so.
    return { kind: 'replayed', verification: { ...first, status: 'PENDING', counter: 0, updatedAt: first.createdAt } };
  }

  private newVerification(
    request: CreateRequest,
    phone: PhoneNumber,
    now: Date,
  ): { verification: Verification; sender: PhoneNumber } {
    const type = typeForRequest[request.type];
    let otp: string;
    let paired: PhoneNumber;
    if (type === 'DROPPED_CALL') {
      paired = this.senders.pickCallerId(this.random);
      otp = paired.e164.slice(-4);
    } else {
      paired = this.senders.smsSender;
      otp = numericCode((max) => this.random.int(max), this.policy.codeLength);
    }
    const verification: Verification = {
      id: this.random.uuid(),
      clientId: request.clientId,
      createdAt: now,
      updatedAt: now,
      expiresAt: new Date(now.getTime() + this.policy.ttlSeconds * 1000),
      otp,
      phoneNumber: phone.e164,
      countryCode: phone.countryCode,
      counter: 0,
      pairedNumber: paired.local,
      type,
      status: 'PENDING',
      webhookUrl: request.webhookUrl,
      reference: request.reference,
    };
    return { verification, sender: paired };
  }
}

/** Carries an expected outcome out of a transaction that must not commit. */
class RollBack {
  constructor(readonly outcome: CreateOutcome) {}
}

function secondsBefore(now: Date, seconds: number): Date {
  return new Date(now.getTime() - seconds * 1000);
}
