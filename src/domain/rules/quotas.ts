import { abroadKey, abroadRoom } from '../abroad.js';
import { hasBudget, untilPeriodEnds, type BudgetRefusal } from '../budgets.js';
import { channelOfDelivery } from '../channel-driver.js';
import { untilNextUtcDay } from '../daily-quota.js';
import type { Amount } from '../money.js';
import { newCountryKey, untilNextHour, type WindowQuota } from '../new-country.js';
import { sendRule } from './send-rule.js';
import { judgesTheUser, knownUserAsk, whereFrom } from './rule-deps.js';

/** A share of an hourly quota a send took before its transaction (`taken` false: there was none left). */
interface Share {
  readonly quota: WindowQuota;
  readonly key: string;
  readonly taken: boolean;
}

const releaseShare = (p: Share): void => {
  if (p.taken) p.quota.release(p.key);
};

/** One share of `quota` under `key` taken, if there is room (`room`: the window's, when it moves). */
async function takeShare(quota: WindowQuota, key: string, room?: number): Promise<Share> {
  return { quota, key, taken: await quota.tryAcquire(key, room) };
}

/**
 * CLIENT_DAILY_SEND_LIMIT (contract 10): a send of the day's quota is taken before the transaction (one short
 * statement now and then, never a lock) and given back if the send is refused after all.
 */
export const dailyQuotaRule = sendRule<{ readonly taken: boolean }>({
  rule: 'daily-quota',
  prepare(s, _j, d) {
    const { dailySends } = d;
    if (d.policy.clientDailySends === 0 || !dailySends || s.testNumber) return null;
    return dailySends.tryAcquire(s.clientId).then((taken) => ({ taken }));
  },
  giveBack(p, d, s) {
    if (p.taken) d.dailySends?.release(s.clientId);
  },
  decide: (s, _j, _read, p) => (p !== null && !p.taken ? { rule: 'daily-quota', refusal: { kind: 'rate-limited', reason: 'daily-quota', retryAfterSeconds: untilNextUtcDay(s.now) } } : null),
});

/**
 * NEW_COUNTRY_LIMIT_COUNT: a client's sends per UTC hour towards a country it has no verified code in, across
 * instances; a known user (a code of theirs verified lately) is not held by it on a create.
 */
export const newCountryRule = sendRule<Share>({
  rule: 'new-country',
  prepare(s, _j, d, v) {
    const quota = d.newCountrySends;
    const conversion = d.conversion;
    if (!quota || !conversion?.knowsCountry || d.policy.newCountrySends === 0 || v === null || v.testNumber || v.regionCode === null) return null;
    if (s.kind === 'create' && s.allowed) return null;
    if (conversion.knowsCountry(v.clientId, v.regionCode)) return null;
    return takeShare(quota, newCountryKey(v.clientId, v.regionCode));
  },
  giveBack: releaseShare,
  asks: (s, _j, p) => (s.kind === 'create' && p !== null && !p.taken ? knownUserAsk(s) : null),
  decide(s, _j, read, p) {
    if (p === null || p.taken || (read.kind === 'create' && read.known)) return null;
    return { rule: 'new-country', passable: s.kind === 'create', refusal: { kind: 'rate-limited', reason: 'new-country', retryAfterSeconds: untilNextHour(s.now) } };
  },
});

/**
 * ABROAD_LIMIT_SHARE: creates towards a country by users with no verified history whose address is in another
 * country, per UTC hour across clients, at a share of the codes verified there over the last hour.
 */
export const abroadRule = sendRule<Share>({
  rule: 'abroad',
  prepare(s, _j, d, v) {
    const { abroadSends: quota, policy } = d;
    if (s.kind !== 'create' || !judgesTheUser(s) || !quota || !policy.abroad || policy.abroad.share === 0 || v === null || v.regionCode === null) return null;
    if (whereFrom(d, s.signals?.ip?.address ?? null, v.regionCode) !== 'elsewhere') return null;
    return takeShare(quota, abroadKey(v.regionCode), abroadRoom(d.conversion?.verifiedIn?.(v.regionCode) ?? 0, policy.abroad));
  },
  giveBack: releaseShare,
  asks: (s, _j, p) => (p !== null && !p.taken ? knownUserAsk(s) : null),
  decide(s, _j, read, p) {
    if (read.kind !== 'create' || p === null || p.taken || read.known) return null;
    return { rule: 'abroad', passable: true, refusal: { kind: 'rate-limited', reason: 'abroad', retryAfterSeconds: untilNextHour(s.now) } };
  },
});

/** What a send holds of its client's budget (`held`; null: nothing), or the period it would pass (`over`). */
interface BudgetHold {
  readonly held: Amount | null;
  readonly over: BudgetRefusal | null;
}

/**
 * The client's daily and monthly budget (contract 17): a send's estimated price (its first provider's price
 * there, else the channel's highest) is held before the transaction, as the day's quota is taken, and given back
 * the same way; a failure to give it back loses nothing (the sweep gives back, within minutes, the hold of a
 * verification that is not pending or was never written).
 */
export const budgetRule = sendRule<BudgetHold>({
  rule: 'budget',
  prepare(s, _j, d, v) {
    const { spend, sendPrice } = d;
    const budget = s.settings?.budget;
    if (!spend || !sendPrice || !budget || !hasBudget(budget) || v === null || v.testNumber || v.status !== 'PENDING') return null;
    const amount = sendPrice(channelOfDelivery(v.delivery.channel), v);
    return spend.hold(s.clientId, v.id, amount, budget, s.now).then((over) => ({ held: over === null ? amount : null, over }));
  },
  async giveBack(p, d, _s, v) {
    if (p.held !== null && v !== null) await d.spend?.release(v.id, p.held).catch(() => undefined);
  },
  decide(s, _j, _read, p) {
    if (p === null || p.over === null) return null;
    return { rule: 'budget', refusal: { kind: 'rate-limited', reason: 'budget', retryAfterSeconds: untilPeriodEnds(p.over.period, s.now), budget: p.over } };
  },
});
