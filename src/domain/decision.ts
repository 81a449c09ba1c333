import type { DeliveryChannel } from './channel-driver.js';
import type { Risk } from './risk.js';

/**
 * The client's own say before a send (contract 18): its backend is asked, signed as webhooks are, and answers
 * allow or deny within `timeoutMs`; a time-out, an error or another answer applies `fallback`.
 */
export interface DecisionSetting {
  readonly url: string;
  readonly timeoutMs: number;
  readonly fallback: 'allow' | 'deny';
}

export const defaultDecisionTimeoutMs = 800;
/** A send waits on the client's answer: never longer than this. */
export const maxDecisionTimeoutMs = 5_000;

/** What the client's backend is told of the send it decides on: the question's `data`, as it is sent. */
export interface DecisionQuestion {
  /** The verification's id, as it will be created. */
  readonly id: string;
  readonly phoneNumber: string;
  readonly countryCode: string;
  readonly channel: DeliveryChannel;
  readonly reference: string | null;
  readonly signals: { readonly ip: string | null; readonly deviceId: string | null; readonly platform: string | null };
  /** How the rules judged the send so far. */
  readonly risk: Risk;
}

/** What came back: an answer, or why none counts. */
export type DecisionAnswer = 'allow' | 'deny' | 'timeout' | 'error' | 'invalid';

/** Asks a client's backend (port of the create). */
export interface CustomerDecisions {
  ask(clientId: string, setting: DecisionSetting, question: DecisionQuestion): Promise<DecisionAnswer>;
}

/** The decision that holds: the client's answer, else its default. */
export function decisionOf(answer: DecisionAnswer, setting: DecisionSetting): 'allow' | 'deny' {
  return answer === 'allow' || answer === 'deny' ? answer : setting.fallback;
}

/** Why a decision setting is refused (`clients update`), or null. */
export function decisionTimeoutProblem(ms: number): string | null {
  return Number.isInteger(ms) && ms >= 50 && ms <= maxDecisionTimeoutMs ? null : `must be whole milliseconds from 50 to ${maxDecisionTimeoutMs}`;
}
