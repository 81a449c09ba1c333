import type { CanonicalAddress } from './ip-address.js';

/**
 * The end user as the client's own backend saw them (contract 14): kept with the verification for
 * RETENTION_DAYS, never shown in an answer or webhook, and counted by the signal limits.
 */
export interface Signals {
  /** Null when not given: the address limits do not apply then. */
  readonly ip: CanonicalAddress | null;
  readonly deviceId: string | null;
  readonly userAgent: string | null;
  readonly appVersion: string | null;
  readonly platform: 'ios' | 'android' | 'web' | 'other' | null;
}

export const platforms = ['ios', 'android', 'web', 'other'] as const;

/**
 * IP_LIMIT_COUNT creates per address, IP_PREFIX_LIMIT_COUNT per its /24 or /48, DEVICE_LIMIT_COUNT per device,
 * per client, each per SIGNAL_WINDOW_SECONDS; 0 turns one off.
 */
export interface SignalPolicy {
  readonly ipCount: number;
  readonly networkCount: number;
  readonly deviceCount: number;
  readonly windowSeconds: number;
}

/** What a signal limit counts: the client's creates from one address, network or device. */
export type SignalKind = 'ip' | 'network' | 'device';

/** One signal a create is counted under, and its limit. */
export interface SignalKey {
  readonly kind: SignalKind;
  readonly value: string;
  readonly limit: number;
  /** An address's network: the address is found (and locked) through it. */
  readonly network?: string;
}

/**
 * The lock keys of a create's signals: an address is covered by its network's key when the network is counted
 * too (the same address is always in the same network), so a create takes one advisory lock fewer.
 */
export function signalLocks(keys: readonly SignalKey[]): SignalKey[] {
  const networked = keys.some((k) => k.kind === 'network');
  return keys.filter((k) => !(k.kind === 'ip' && networked));
}

/** The signals of a create the limits count, those turned off or not given left out, in a fixed order. */
export function signalKeys(signals: Signals | null, policy: SignalPolicy): SignalKey[] {
  if (!signals) return [];
  const keys: SignalKey[] = [];
  if (signals.ip && policy.ipCount > 0) keys.push({ kind: 'ip', value: signals.ip.address, limit: policy.ipCount, network: signals.ip.network });
  if (signals.ip && policy.networkCount > 0) keys.push({ kind: 'network', value: signals.ip.network, limit: policy.networkCount });
  if (signals.deviceId !== null && policy.deviceCount > 0) keys.push({ kind: 'device', value: signals.deviceId, limit: policy.deviceCount });
  return keys;
}

/**
 * A signal's creates within the window that still hold their place: a verified create has earned it back
 * (it is not counted), a refused one never took one. `verified` counts the verified ones, which widen the room.
 */
export interface SignalState {
  readonly recentCreates: number;
  readonly oldest: Date | null;
  readonly verified: number;
  /**
   * The signal's creates over the last `signalHistorySeconds`, unverified and verified: read only when the hour
   * would refuse it (null otherwise).
   */
  readonly lastDay?: { readonly unverified: number; readonly verified: number } | null;
}

/**
 * How far back an address's verified creates still earn it room when its hour has none: a carrier's NAT address
 * whose users verified yesterday evening is not refused at the start of the morning (the pumping simulation
 * refused about 36 such users a run, 0.75 % of ordinary creates, when only the hour counted).
 */
export const signalHistorySeconds = 86_400;

/**
 * Unverified creates a signal may hold for each verified one in the window, when that is more than its limit. A
 * carrier's NAT address or a shared office network carries many real users, nearly all of whom verify: their
 * address earns room as they do (the pumping simulation's NAT users were refused at 11 % without it). An attacker
 * on such an address gets a pumped send only for every two codes someone verifies there.
 */
export const unverifiedPerVerified = 0.5;

/** The room a signal has: its limit, or more when its verified creates earned more. */
export function signalRoom(limit: number, verified: number): number {
  return Math.max(limit, Math.floor(verified * unverifiedPerVerified));
}

/**
 * Whether a signal has room: in the hour, its limit or half its verified creates; failing that, over the last
 * day, half its verified creates against all its unverified ones of the day. The day holds the same ratio as the
 * hour, so an attacker on a busy NAT address still gets one pumped send for every two codes verified there.
 */
export function hasRoom(limit: number, state: SignalState): boolean {
  if (state.recentCreates < signalRoom(limit, state.verified)) return true;
  const day = state.lastDay;
  return day != null && day.unverified < Math.floor(day.verified * unverifiedPerVerified);
}

export type SignalDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly kind: SignalKind; readonly retryAfterSeconds: number };

/** The first signal past its limit refuses the create; the wait is until its oldest create leaves the window. */
export function decideSignals(
  keys: readonly SignalKey[],
  states: readonly SignalState[],
  now: Date,
  windowSeconds: number,
): SignalDecision {
  for (const [i, key] of keys.entries()) {
    const state = states[i] ?? { recentCreates: 0, oldest: null, verified: 0 };
    if (hasRoom(key.limit, state)) continue;
    const frees = (state.oldest?.getTime() ?? now.getTime()) + windowSeconds * 1000;
    return { allowed: false, kind: key.kind, retryAfterSeconds: Math.max(1, Math.ceil((frees - now.getTime()) / 1000)) };
  }
  return { allowed: true };
}
