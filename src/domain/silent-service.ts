import { dispatched, type AfterCommit } from './after-commit.js';
import { eventsFor } from './outbox-events.js';
import type { Clock, Random } from './ports.js';
import { decideSilentProof, type NetworkProof, type NumberProofChecker } from './silent-proof.js';
import { asOf, type Verification } from './verification.js';
import type { VerificationStore } from './verification-store.js';

export interface SilentServiceDeps {
  readonly store: VerificationStore;
  readonly afterCommit: AfterCommit;
  readonly clock: Clock;
  readonly random: Random;
  /** OTP_MAX_ATTEMPTS: a proof that proves nothing counts as a wrong code does. */
  readonly maxAttempts: number;
  /** The configured provider's token checker (SILENT_PROVIDER=firebase); null: tokens are not taken here. */
  readonly tokens: NumberProofChecker | null;
  /** The network's proof (SILENT_PROVIDER=camara); null: no check URL is served here. */
  readonly network: NetworkProof | null;
  /** Fails a verification's silent step now (DeliveryService.silentStepFailed): the next step, else UNDELIVERABLE. */
  readonly failStep: (verificationId: string, reason: string) => Promise<void>;
}

/** What opening a check URL came to. */
export type NetworkStart = { readonly kind: 'redirect'; readonly url: string } | { readonly kind: 'not-found' } | { readonly kind: 'over' };

/**
 * What a callback from the operator came to, for the page the device is shown: `verified`; `not-verified` (the
 * operator said another number, or refused: `wifi` when it could not see the device on its network); `failed`
 * (the operator could not be asked); `over` (the step had ended already: a replay, or a late callback, changes
 * nothing); `forged` (not a state of ours: nothing changed).
 */
export type NetworkCallbackOutcome =
  | { readonly kind: 'verified' }
  | { readonly kind: 'not-verified'; readonly wifi: boolean }
  | { readonly kind: 'failed' }
  | { readonly kind: 'over' }
  | { readonly kind: 'forged' };

/** Whether a verification still waits for its silent step's proof. */
function awaitingProof(v: Verification | null, now: Date): v is Verification {
  return v !== null && v.type === 'SILENT' && v.delivery.channel === 'SILENT' && asOf(v, now).status === 'PENDING';
}

/** What posting a device's token came to (POST /v1/otp/{id}/silent). */
export type SilentTokenOutcome =
  | { readonly kind: 'success'; readonly verification: Verification }
  | { readonly kind: 'mismatch'; readonly verification: Verification }
  | { readonly kind: 'not-pending'; readonly verification: Verification }
  | { readonly kind: 'not-found' }
  /** Not a SILENT verification, or this service takes no tokens (SILENT_PROVIDER is not firebase). */
  | { readonly kind: 'not-silent'; readonly issue: string }
  /** The token could not be checked now (the key set did not come): nothing changed, no attempt counted. */
  | { readonly kind: 'unavailable'; readonly reason: string };

/**
 * Silent verification's transaction scripts (contract 19): a device's proof of its number, checked by the
 * provider before the transaction, then decided and written with its events as a verify is.
 */
export class SilentService {
  constructor(private readonly deps: SilentServiceDeps) {}

  /** A Firebase PNV token for a SILENT verification: its number proved is SUCCESS, anything else a wrong attempt. */
  async proveWithToken(clientId: string, id: string, token: string): Promise<SilentTokenOutcome> {
    const { store, clock, tokens, maxAttempts } = this.deps;
    const known = await store.find(clientId, id);
    if (!known || known.relayed) return { kind: 'not-found' };
    if (known.type !== 'SILENT') return { kind: 'not-silent', issue: `verification ${id} is of type ${known.type}, not SILENT: it is verified with its code (POST /v1/otp/verify)` };
    if (tokens === null) return { kind: 'not-silent', issue: 'this service takes no tokens: its SILENT_PROVIDER is not firebase' };
    // Checked against the key set before the transaction: a slow key set holds no row. A verification no longer
    // pending is answered so whatever the token (the script below says so without counting).
    const check = known.status === 'PENDING' ? await tokens.check(token, known.phoneNumber) : ({ kind: 'not-proved', reason: 'not pending' } as const);
    if (check.kind === 'unavailable') return { kind: 'unavailable', reason: check.reason };
    const committed = await store.optimistic(async (tx): Promise<SilentTokenOutcome> => {
      const current = await tx.find(clientId, id);
      if (!current) return { kind: 'not-found' };
      const now = clock.now();
      const decision = decideSilentProof(current, check.kind === 'proved', now, maxAttempts);
      switch (decision.kind) {
        case 'not-silent':
          return { kind: 'not-silent', issue: `verification ${id} is not SILENT` };
        case 'not-pending':
          // An expiry the sweep has not recorded yet is recorded now, so that its event is neither lost nor late.
          if (current.status === 'PENDING') tx.save(current, decision.current, this.eventsFor(decision.current, now));
          return { kind: 'not-pending', verification: decision.current };
        default:
          tx.save(current, decision.next, this.eventsFor(decision.next, now));
          return { kind: decision.kind, verification: decision.next };
      }
    }, maxAttempts + 2);
    return dispatched(this.deps.afterCommit, committed);
  }

  /** The device opened its check URL: the operator's authorization request, while the silent step waits. */
  async beginNetworkCheck(id: string): Promise<NetworkStart> {
    const { network, store, clock } = this.deps;
    if (network === null || !/^[0-9a-f-]{36}$/.test(id)) return { kind: 'not-found' };
    const v = await store.findById(id);
    if (v === null || v.type !== 'SILENT') return { kind: 'not-found' };
    return awaitingProof(v, clock.now()) ? { kind: 'redirect', url: network.begin(id) } : { kind: 'over' };
  }

  /**
   * The operator sent the device back (`code`, or `error`: access_denied for a device it cannot see on its
   * network, on Wi-Fi say). The operator is asked only while the step waits; its `true` is SUCCESS, anything else
   * that step's failure at once.
   */
  async networkCallback(callback: { readonly state: string; readonly code: string | null; readonly error: string | null }): Promise<NetworkCallbackOutcome> {
    const { network, store, clock } = this.deps;
    const id = network?.opened(callback.state) ?? null;
    if (network === null || id === null) return { kind: 'forged' };
    const v = await store.findById(id);
    if (!awaitingProof(v, clock.now())) return { kind: 'over' };
    if (callback.error !== null || callback.code === null) {
      await this.deps.failStep(id, `the operator's authorization answered ${callback.error ?? 'without a code'}`);
      return { kind: 'not-verified', wifi: callback.error === 'access_denied' };
    }
    const answer = await network.check(callback.state, callback.code, v.phoneNumber);
    if (answer.kind === 'verified') return (await this.provedByNetwork(id)) ? { kind: 'verified' } : { kind: 'over' };
    await this.deps.failStep(id, answer.kind === 'failed' ? answer.reason : 'the operator says the device has another number');
    return answer.kind === 'failed' ? { kind: 'failed' } : { kind: 'not-verified', wifi: false };
  }

  /** SUCCESS by the network's word, with its event, if the step still waits; false when it had ended. */
  private async provedByNetwork(id: string): Promise<boolean> {
    const committed = await this.deps.store.transaction(async (tx) => {
      const now = this.deps.clock.now();
      const current = await tx.findForUpdate(id);
      if (!awaitingProof(current, now)) return false;
      const next: Verification = { ...current, status: 'SUCCESS', nextStepAt: null, updatedAt: now };
      tx.update(next);
      tx.record(this.eventsFor(next, now));
      return true;
    }, [`verification|${id}`]);
    return dispatched(this.deps.afterCommit, committed);
  }

  private eventsFor(v: Verification, now: Date) {
    return eventsFor(v, now, this.deps.random, this.deps.afterCommit);
  }
}
