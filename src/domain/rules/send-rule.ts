import type { BudgetRefusal } from '../budgets.js';
import type { ClientSettings } from '../client-settings.js';
import type { ThrottledRoute } from '../conversion.js';
import type { PhoneNumber } from '../phone.js';
import { hear, type FactorEntry, type LimitReason, type RiskRule, type RuleMode } from '../risk.js';
import type { Signals } from '../signals.js';
import type { RequestType, ResendDecision, Verification } from '../verification.js';
import type { CreateHistory, CreateHistoryQuery, VerificationTx } from '../verification-store.js';
import type { RuleDeps } from './rule-deps.js';

/**
 * A send the rules judge (contract 18): a create's first send (a relayed code's too), a resend, or a workflow
 * step falling due. What every rule may look at; what the rules find out on the way (a CAPTCHA passed, a
 * forwarded line) is the `Judgement`'s.
 */
export interface Send {
  readonly kind: 'create' | 'resend' | 'step';
  readonly clientId: string;
  /** The client's settings; null for a step (its verification's first send was admitted already). */
  readonly settings: ClientSettings | null;
  /** The verification's creation time on a create; the resend's time on a resend. */
  readonly now: Date;
  readonly phone: Pick<PhoneNumber, 'e164' | 'countryCode' | 'region'>;
  /** The end user as the client's backend saw them (a create's); null when not given, and on a resend. */
  readonly signals: Signals | null;
  readonly captchaToken: string | null;
  /** A code an auth server made (contract 15's relays). */
  readonly relayed: boolean;
  /** A test number's code reaches no provider: no rule judges it. */
  readonly testNumber: boolean;
  /** The number is on an allow list: it skips the per-number, prefix, signal, conversion and carrier rules. */
  readonly allowed: boolean;
  /** The request type the send goes out as (a create's first, a step's), and the workflow's steps after it. */
  readonly type: RequestType | null;
  readonly workflow: readonly RequestType[];
  /** The verification as read before a resend's transaction (null when nothing asked for it, and on a create). */
  readonly current: Verification | null;
}

/** What a rule refuses a send with, when it enforces; the factors heard are added to it. */
export type RuleRefusal =
  | {
      readonly kind: 'rate-limited';
      readonly reason: LimitReason;
      readonly retryAfterSeconds: number;
      /** `budget`: the period whose limit the send would have passed, and what is spent in it (contract 17). */
      readonly budget?: BudgetRefusal;
      /** `conversion` of a throttled country: its country and, where the throttle is one network's, that network. */
      readonly throttled?: ThrottledRoute;
    }
  | { readonly kind: 'not-allowed'; readonly rule: 'destination' | 'prefix' | 'decision' | 'call-forwarding'; readonly detail: string }
  | { readonly kind: 'blocked'; readonly value: string }
  | { readonly kind: 'captcha'; readonly outcome: 'required' | 'failed' | 'unavailable' };

/** One rule's objection to a send, decided from what its transaction read. */
export interface Objection {
  readonly rule: RiskRule;
  readonly refusal: RuleRefusal;
  /** Heard in this mode whatever the rule's (a code's own limits on a resend always enforce). */
  readonly mode?: RuleMode;
  /** A person passes it where a script does not: a client that asks a CAPTCHA under throttles asks for one instead. */
  readonly passable?: boolean;
  /** Written with the refusal when this objection refuses the send (a prefix's block). */
  readonly effect?: (tx: VerificationTx) => void;
}

/** What a resend's transaction read, for the rules that judge resends. */
export interface ResendRead {
  readonly kind: 'resend';
  readonly current: Verification;
  /** The code's own limits (cool-down, OTP_MAX_SENDS), decided on the verification as locked. */
  readonly decision: Extract<ResendDecision, { kind: 'resend' | 'limited' }>;
  /** Whether the code's user is known (a code of theirs verified lately) and the address it was asked from: read once, when asked. */
  readonly user: () => Promise<{ readonly known: boolean; readonly address: string | null }>;
}

/** What a create's one read found, for the rules that judge creates. */
export interface CreateRead {
  readonly kind: 'create';
  readonly history: CreateHistory;
  /** The query it answered (a signal's state is found by its place among the keys asked). */
  readonly query: CreateHistoryQuery;
  /** The number, address, network or device had a code verified, or the CAPTCHA was passed: a known user's. */
  readonly known: boolean;
}

export type TxRead = CreateRead | ResendRead;

/** What a create's one read is asked, as each rule adds its part to it. */
export type ReadAsk = Partial<Omit<CreateHistoryQuery, 'clientId' | 'phoneNumber'>>;

/**
 * One named rule (contract 18), run for every send decision by `judgeSend`'s stages, each optional: `screen` asks
 * what lies outside the database before anything is made; `consult` asks of the record about to be sent;
 * `prepare` works out before the transaction what the rule will decide on (and takes the shares of quotas it
 * needs, given back by `giveBack` if the send is refused); `asks` is its part of a create's one read; `decide`
 * objects from what the transaction read. A rule whose mode is `off` for the client is not run at all.
 */
export interface SendRule<P = unknown> {
  readonly rule: RiskRule;
  screen?(s: Send, j: Judgement, d: RuleDeps): Promise<RuleRefusal | null> | RuleRefusal | null;
  consult?(s: Send, j: Judgement, d: RuleDeps, v: Verification): Promise<RuleRefusal | null> | RuleRefusal | null;
  /** `v`: the record about to be made (a create's), or the one read before a resend's transaction (null: none was). */
  prepare?(s: Send, j: Judgement, d: RuleDeps, v: Verification | null): Promise<P | null> | P | null;
  giveBack?(p: P, d: RuleDeps, s: Send, v: Verification | null): Promise<void> | void;
  asks?(s: Send, j: Judgement, p: P | null, d: RuleDeps): ReadAsk | null;
  decide?(s: Send, j: Judgement, read: TxRead, p: P | null, d: RuleDeps): Promise<Objection | null> | Objection | null;
}

/** A rule of the list, whatever it prepares. */
export type AnySendRule = SendRule<never>;

/** A rule as the list holds it. */
export function sendRule<P>(rule: SendRule<P>): AnySendRule {
  return rule as unknown as AnySendRule;
}

/**
 * What the rules found of one send as they ran: the factors heard (each rule that objected, in its mode), the
 * CAPTCHA's outcome, the workflow steps a forwarded line skips, and whether the create takes a throttled
 * country's local room.
 */
export class Judgement {
  readonly heard: FactorEntry[];
  /** The client asks its CAPTCHA under throttles only: `ask` none came (a throttle asks for one), `passed` one did. */
  challenge: 'ask' | 'passed' | null = null;
  /** A CAPTCHA was asked and passed (the verdict `challenge`). */
  captchaPassed = false;
  /** The workflow steps a create's first send moves past (a call's code to a forwarded line). */
  steps = 0;
  /** The create is a local user's under a country throttle, in its local room. */
  localRoom = false;
  /** The rules not off for the send's client, once the judge has worked them out. */
  rules: readonly AnySendRule[] | null = null;
  private readonly memos: Map<string, Promise<unknown>>;

  constructor(
    readonly modeOf: (rule: RiskRule) => RuleMode,
    heard: readonly FactorEntry[] = [],
    memos = new Map<string, Promise<unknown>>(),
  ) {
    this.heard = [...heard];
    this.memos = memos;
  }

  /** A rule that objects, heard in its mode: true when it refuses (it enforces). */
  refuses(rule: RiskRule, mode: RuleMode = this.modeOf(rule)): boolean {
    return hear(rule, mode, this.heard);
  }

  /** One answer per send for what several rules ask together (the carrier checks go out at once). */
  memo<T>(key: string, ask: () => Promise<T>): Promise<T> {
    let kept = this.memos.get(key);
    if (!kept) this.memos.set(key, (kept = ask()));
    return kept as Promise<T>;
  }

  /** A copy for one run of a transaction script (which may run again): what it hears is begun afresh each time. */
  fork(): Judgement {
    const copy = new Judgement(this.modeOf, this.heard, this.memos);
    copy.challenge = this.challenge;
    copy.captchaPassed = this.captchaPassed;
    copy.steps = this.steps;
    copy.rules = this.rules;
    return copy;
  }
}
