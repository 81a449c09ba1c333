/**
 * Why a send was judged risky (contract 18): every guard is a named rule, and each rule that objects to a send
 * names one risk factor. A refusal carries the factors of the rules that refused it, so that a client and an
 * operator read why, not only which limit fired. Signal values (addresses, devices) are never part of a factor.
 */

/** The risk factors, one per kind of objection. */
export type RiskFactor =
  | 'invalid_phone_line'
  | 'destination_not_permitted'
  | 'in_block_list'
  | 'number_range_abuse'
  | 'poor_conversion_history'
  | 'new_destination'
  | 'ip_concentration'
  | 'device_reuse'
  | 'repeated_attempts'
  | 'quota_exceeded'
  | 'ip_country_mismatch'
  | 'captcha_failed'
  | 'sim_swap_recent'
  | 'call_forwarding_active'
  | 'customer_denied';

/** A rule enforces (refuses), runs in shadow (records its factor, refuses nothing) or is off. */
export const ruleModes = ['enforce', 'shadow', 'off'] as const;
export type RuleMode = (typeof ruleModes)[number];

/** The guards, by name, and the factor each one names when it objects. */
export const riskRules = {
  /** The client's CAPTCHA was not passed (contract 14). */
  captcha: 'captcha_failed',
  /** ALLOWED_COUNTRIES and the client's own countries (contract 10). */
  countries: 'destination_not_permitted',
  /** BLOCKED_LINE_TYPES (contract 10). */
  'line-types': 'invalid_phone_line',
  /** The operator's block lists (contract 14). */
  lists: 'in_block_list',
  /** PREFIX_LIMIT_COUNT: creates towards one prefix across clients (contract 10). */
  prefix: 'number_range_abuse',
  /** A country or a client throttled for its conversion (contracts 10, 14). */
  conversion: 'poor_conversion_history',
  /** A client's resends to users with no verified history, throttled for their conversion (MIN_RESEND_SAMPLE). */
  'resend-throttle': 'poor_conversion_history',
  /** NEW_COUNTRY_LIMIT_COUNT: sends towards a country new to the client. */
  'new-country': 'new_destination',
  /** ABROAD_LIMIT_SHARE: creates towards a country by unknown users whose address is in another country. */
  abroad: 'ip_country_mismatch',
  /** IP_LIMIT_COUNT: creates per end user's address (contract 14). */
  ip: 'ip_concentration',
  /** IP_PREFIX_LIMIT_COUNT: creates per end user's network (contract 14). */
  network: 'ip_concentration',
  /** DEVICE_LIMIT_COUNT: creates per end user's device (contract 14). */
  device: 'device_reuse',
  /** The number's own limits: OTP_PHONE_LIMIT, the resend cool-down and OTP_MAX_SENDS (contracts 6, 9). */
  phone: 'repeated_attempts',
  /** CLIENT_DAILY_SEND_LIMIT (contract 10). */
  'daily-quota': 'quota_exceeded',
  /** The client's daily and monthly budget (contract 17). */
  budget: 'quota_exceeded',
  /**
   * The number's SIM changed within SIM_SWAP_MAX_AGE_HOURS (SIM_SWAP_PROVIDER): enforced as a challenge, the
   * client's CAPTCHA; a client without one hears it as in shadow (contract 18).
   */
  'sim-swap': 'sim_swap_recent',
  /** The number's calls are forwarded unconditionally (CALL_FORWARDING_PROVIDER): a call's code would ring elsewhere. */
  'call-forwarding': 'call_forwarding_active',
  /** The client's decision webhook answered deny, or its default is deny (contract 18). */
  decision: 'customer_denied',
} as const satisfies Record<string, RiskFactor>;

export type RiskRule = keyof typeof riskRules;

/** Every factor a rule may name, once each, in the rules' order. */
export const riskFactors: readonly RiskFactor[] = [...new Set(Object.values(riskRules))];

/** One rule's objection to a send, as a refusal's details and the record name it. */
export interface FactorEntry {
  readonly factor: RiskFactor;
  readonly rule: RiskRule;
  readonly mode: RuleMode;
}

/** The factor of an enforced rule that refused a send. */
export function enforced(rule: RiskRule): FactorEntry {
  return { factor: riskRules[rule], rule, mode: 'enforce' };
}

/**
 * A rule that objects to a send, heard in its mode: off it is not heard; otherwise its factor joins `heard`, and it
 * refuses (true) when it enforces, nothing in shadow.
 */
export function hear(rule: RiskRule, mode: RuleMode, heard: FactorEntry[]): boolean {
  if (mode === 'off') return false;
  heard.push({ factor: riskRules[rule], rule, mode });
  return mode === 'enforce';
}

/** The rule behind each limit a create or resend is refused by (`rate-limited`'s reason). */
const limitRules = {
  phone: 'phone',
  cooldown: 'phone',
  'max-sends': 'phone',
  'daily-quota': 'daily-quota',
  budget: 'budget',
  conversion: 'conversion',
  'unknown-user': 'resend-throttle',
  'new-country': 'new-country',
  abroad: 'abroad',
  ip: 'ip',
  network: 'network',
  device: 'device',
} as const satisfies Record<string, RiskRule>;

export type LimitReason = keyof typeof limitRules;

/** The rule behind a limit. */
export function limitRule(reason: LimitReason): RiskRule {
  return limitRules[reason];
}

/**
 * What was judged of a send that went out (contract 18): `allow` nothing objected; `challenge` a CAPTCHA was asked
 * and passed; `shadow_block` a rule in shadow mode would have refused it (the code was sent); `block` refused.
 */
export type RiskVerdict = 'allow' | 'challenge' | 'block' | 'shadow_block';

export interface Risk {
  readonly verdict: RiskVerdict;
  readonly factors: readonly FactorEntry[];
}

export const allowedRisk: Risk = { verdict: 'allow', factors: [] };

/** The risk of a send the rules let through: shadowed, challenged or allowed. */
export function riskOfSent(factors: readonly FactorEntry[], captchaPassed: boolean): Risk {
  if (factors.some((f) => f.mode === 'shadow')) return { verdict: 'shadow_block', factors };
  if (captchaPassed) return { verdict: 'challenge', factors };
  return factors.length === 0 ? allowedRisk : { verdict: 'allow', factors };
}

/**
 * A verification's risk once a later send of it was judged too (a resend): its factors joined by those newly heard
 * (each rule and mode once), and the verdict of them all; `challenge` stays once a CAPTCHA was passed.
 */
export function withLaterSend(risk: Risk | undefined, heard: readonly FactorEntry[], captchaPassed: boolean): Risk {
  const kept = risk?.factors ?? [];
  const added = heard.filter((f) => !kept.some((k) => k.rule === f.rule && k.mode === f.mode));
  return riskOfSent([...kept, ...added], captchaPassed || risk?.verdict === 'challenge');
}

export function isRiskRule(name: string): name is RiskRule {
  return Object.hasOwn(riskRules, name);
}

export function isRuleMode(mode: string): mode is RuleMode {
  return (ruleModes as readonly string[]).includes(mode);
}

/** A rule's mode, service-wide (`clientId` null) or for one client. */
export interface RuleModeEntry {
  readonly rule: RiskRule;
  readonly clientId: string | null;
  readonly mode: RuleMode;
}

/** The rules' modes in force: a client's own, else the service-wide one, else `enforce`. */
export class RuleModes {
  /** Per rule with a mode set: the service-wide one, and the clients' own. Asked for every rule of every send. */
  private readonly modes = new Map<RiskRule, { all?: RuleMode; readonly clients: Map<string, RuleMode> }>();

  constructor(readonly entries: readonly RuleModeEntry[]) {
    for (const e of entries) {
      let rule = this.modes.get(e.rule);
      if (!rule) this.modes.set(e.rule, (rule = { clients: new Map() }));
      if (e.clientId === null) rule.all = e.mode;
      else rule.clients.set(e.clientId, e.mode);
    }
  }

  modeOf(rule: RiskRule, clientId: string): RuleMode {
    const set = this.modes.get(rule);
    return set === undefined ? 'enforce' : (set.clients.get(clientId) ?? set.all ?? 'enforce');
  }
}

export const allEnforced = new RuleModes([]);

/** One rule's objection to a send, with the refusal it makes when enforced. */
export interface Objection<T> {
  readonly rule: RiskRule;
  readonly refusal: T;
}

/**
 * The rules' objections judged in order, each heard in its mode (`hear`, its factor joining `heard`): the first one
 * enforced refuses; null when none does.
 */
export function judge<T>(objections: readonly Objection<T>[], modeOf: (rule: RiskRule) => RuleMode, heard: FactorEntry[]): T | null {
  let refusal: T | null = null;
  for (const o of objections) {
    if (hear(o.rule, modeOf(o.rule), heard) && refusal === null) refusal = o.refusal;
  }
  return refusal;
}
