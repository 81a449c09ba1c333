import { dispatched, type AfterCommit } from './after-commit.js';
import { eventsFor } from './outbox-events.js';
import type { Clock, Random } from './ports.js';
import { decideSilentProof, type NumberProofChecker } from './silent-proof.js';
import type { Verification } from './verification.js';
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

  private eventsFor(v: Verification, now: Date) {
    return eventsFor(v, now, this.deps.random, this.deps.afterCommit);
  }
}
