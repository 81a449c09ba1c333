import { lockKeys } from '../lock-keys.js';
import { signalLocks, type SignalKey } from '../signals.js';
import type { Verification } from '../verification.js';
import type { CreateHistoryQuery } from '../verification-store.js';
import type { RuleDeps } from './rule-deps.js';
import type { AnySendRule, Judgement, Objection, ReadAsk, RuleRefusal, Send, TxRead } from './send-rule.js';

/** What the rules prepared of one send before its transaction, in the list's order, and how to give it back. */
export interface Prepared {
  readonly states: ReadonlyMap<AnySendRule, unknown>;
  /** Gives back every share taken and every hold made (the send was refused, or its transaction failed). */
  giveBack(): Promise<void>;
}

/** The objection that refuses a send, as its caller answers it. */
export interface Refused {
  readonly refusal: RuleRefusal;
  readonly effect?: Objection['effect'];
}

/**
 * Runs the rules' stages for one send (contract 18): each stage runs the rules in the list's order, skipping those
 * off for the send's client. The screen and consult stages stop at the first refusal; the decide stage hears every
 * rule that objects, and the first one enforced refuses.
 */
export class SendJudge {
  constructor(
    private readonly rules: readonly AnySendRule[],
    private readonly deps: RuleDeps,
  ) {}

  /** Before anything is made: the rules that ask outside the database (a CAPTCHA, the network). */
  async screen(s: Send, j: Judgement): Promise<RuleRefusal | null> {
    for (const rule of this.on(j)) {
      if (!rule.screen) continue;
      const screened = rule.screen(s, j, this.deps);
      const refusal = screened instanceof Promise ? await screened : screened;
      if (refusal !== null) return refusal;
    }
    return null;
  }

  /** On the record about to be sent: the client's own say. */
  async consult(s: Send, j: Judgement, v: Verification): Promise<RuleRefusal | null> {
    for (const rule of this.on(j)) {
      if (!rule.consult) continue;
      const consulted = rule.consult(s, j, this.deps, v);
      const refusal = consulted instanceof Promise ? await consulted : consulted;
      if (refusal !== null) return refusal;
    }
    return null;
  }

  /** What each rule works out before the transaction, shares of quotas taken; all given back if one fails. */
  async prepare(s: Send, j: Judgement, v: Verification | null): Promise<Prepared> {
    const states = new Map<AnySendRule, unknown>();
    const giveBack = async () => {
      for (const [rule, p] of states) await rule.giveBack?.(p as never, this.deps, s, v);
    };
    try {
      for (const rule of this.on(j)) {
        if (!rule.prepare) continue;
        const made = rule.prepare(s, j, this.deps, v);
        // Most rules work theirs out at once: only those that take a share wait for it.
        const p = made instanceof Promise ? await made : made;
        if (p !== null) states.set(rule, p);
      }
    } catch (err) {
      await giveBack();
      throw err;
    }
    return { states, giveBack };
  }

  /** A create's one read: what each rule asks of it, together. */
  query(s: Send, j: Judgement, prepared: Prepared): CreateHistoryQuery {
    const { now } = s;
    const query: { -readonly [K in keyof CreateHistoryQuery]: CreateHistoryQuery[K] } = {
      clientId: s.clientId,
      phoneNumber: s.phone.e164,
      lookBackFrom: now,
      windowFrom: now,
      prefix: null,
      throttled: null,
      clientThrottled: null,
      signals: { keys: [], since: now, historySince: now },
      verifiedSince: null,
    };
    const keys: SignalKey[] = [];
    for (const rule of this.on(j)) {
      const ask: ReadAsk | null = rule.asks?.(s, j, (prepared.states.get(rule) ?? null) as never, this.deps) ?? null;
      if (ask === null) continue;
      if (ask.signals) {
        keys.push(...ask.signals.keys);
        query.signals = { ...ask.signals, keys };
      }
      if (ask.lookBackFrom) query.lookBackFrom = ask.lookBackFrom;
      if (ask.windowFrom) query.windowFrom = ask.windowFrom;
      if (ask.prefix) query.prefix = ask.prefix;
      if (ask.throttled) query.throttled = ask.throttled;
      if (ask.clientThrottled) query.clientThrottled = ask.clientThrottled;
      if (ask.verifiedSince) query.verifiedSince = ask.verifiedSince;
    }
    return query;
  }

  /** The names a create serialises on, across instances: each count its read makes is exact. */
  locks(query: CreateHistoryQuery): string[] {
    const { clientId } = query;
    return [
      ...signalLocks(query.signals.keys).map((k) => lockKeys.signal(clientId, k.kind, k.value)),
      lockKeys.phone(clientId, query.phoneNumber),
      ...(query.prefix !== null ? [lockKeys.prefix(query.prefix.prefix)] : []),
      ...(query.throttled !== null ? [lockKeys.country(query.throttled)] : []),
      ...(query.clientThrottled !== null ? [lockKeys.clientThrottle(clientId)] : []),
    ];
  }

  /**
   * The rules judged from what the transaction read, each objection heard in its mode: the first enforced one
   * refuses (a client asking a CAPTCHA under throttles asks for one where a person could pass); null: none does.
   */
  async decide(s: Send, j: Judgement, read: TxRead, prepared: Prepared): Promise<Refused | null> {
    let refused: Refused | null = null;
    for (const rule of this.on(j)) {
      if (!rule.decide) continue;
      const decided = rule.decide(s, j, read, (prepared.states.get(rule) ?? null) as never, this.deps);
      const o = decided instanceof Promise ? await decided : decided;
      if (o === null || !j.refuses(o.rule, o.mode ?? j.modeOf(o.rule)) || refused !== null) continue;
      refused = o.passable && j.challenge === 'ask' ? { refusal: { kind: 'captcha', outcome: 'required' } } : { refusal: o.refusal, ...(o.effect && { effect: o.effect }) };
    }
    return refused;
  }

  /** The rules not off for the send's client, worked out once per judgement (its forks keep them). */
  private on(j: Judgement): readonly AnySendRule[] {
    return (j.rules ??= this.rules.filter((r) => j.modeOf(r.rule) !== 'off'));
  }
}
