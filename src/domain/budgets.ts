import { untilNextUtcDay, utcDay } from './daily-quota.js';
import type { Amount } from './money.js';

/**
 * A client's budgets (contract 17, `clients update --daily-spend-limit 25.00 --monthly-spend-limit 500.00`): what
 * its sends may cost in a UTC day and a UTC month, in COST_CURRENCY; null: no limit for that period.
 */
export interface Budget {
  readonly daily: Amount | null;
  readonly monthly: Amount | null;
}

export type BudgetPeriod = 'day' | 'month';

/** A send the budget refused: the limit of the period it would have passed, and what is spent in that period. */
export interface BudgetRefusal {
  readonly period: BudgetPeriod;
  readonly limit: Amount;
  readonly spent: Amount;
}

/** A budget's period as a client's spend is kept and shown: its first day, its limit, and what is spent in it. */
export interface PeriodSpend {
  readonly period: BudgetPeriod;
  readonly starts: string;
  readonly limit: Amount | null;
  readonly spent: Amount;
}

export function hasBudget(budget: Budget): boolean {
  return budget.daily !== null || budget.monthly !== null;
}

/** The first day (YYYY-MM-DD) of the UTC day and of the UTC month an instant is in. */
export function periodStarts(at: Date): Readonly<Record<BudgetPeriod, string>> {
  const day = utcDay(at);
  return { day, month: `${day.slice(0, 8)}01` };
}

/** The wait of a send a budget refused: until its period ends, at the next UTC midnight or first of a month. */
export function untilPeriodEnds(period: BudgetPeriod, now: Date): number {
  if (period === 'day') return untilNextUtcDay(now);
  const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((end - now.getTime()) / 1000));
}

/**
 * Budgets' spend, shared by every instance (port; SpendStore in the store implements it). An admitted send holds
 * its estimated price under its verification until a provider takes it (then its cost replaces the hold) or the
 * verification ends without it (then the hold is given back), so that the spend is exact across instances while
 * sends are in flight.
 */
export interface Spend {
  /**
   * Holds `amount` of the client's budget for one more send of `verificationId` when neither period's spend passes
   * its limit with it (one statement, under the spend rows' locks); the period it would pass, otherwise.
   */
  hold(clientId: string, verificationId: string, amount: Amount, budget: Budget, now: Date): Promise<BudgetRefusal | null>;
  /** Gives back one send's hold of `amount` that was not made after all (the create or resend was refused). */
  release(verificationId: string, amount: Amount): Promise<void>;
  /** The client's spend in today's and this month's periods, with their limits. */
  spendOf(clientId: string, budget: Budget, now: Date): Promise<PeriodSpend[]>;
}
