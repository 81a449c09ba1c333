import { fallbackLeft, type Delivery, type RequestType, type Verification } from './verification.js';

/**
 * The workflow across channels (contract 13), pure: which later steps a create may ask for, and what moving to
 * the next step does to a verification. The caller persists it with the step's send job, in one transaction.
 */

/** A workflow has at most this many steps after the first. */
export const maxFallbackSteps = 2;

/**
 * Why a create's `fallback` is refused, or null: at most `maxFallbackSteps` request types from `allowed` (the
 * registry's step types whose channel has a provider here), none equal to `type`, none twice.
 */
export function fallbackProblem(type: RequestType, fallback: readonly string[], allowed: readonly RequestType[]): string | null {
  if (fallback.length > maxFallbackSteps) return `must hold at most ${maxFallbackSteps} request types`;
  const unknown = fallback.filter((t) => !(allowed as readonly string[]).includes(t));
  if (unknown.length > 0) return `must name request types from ${allowed.join(', ') || '(none offered here)'}; not ${unknown.join(', ')}`;
  if (fallback.includes(type)) return `must not repeat the create's type ${type}`;
  if (new Set(fallback).size !== fallback.length) return 'must not name a request type twice';
  return null;
}

/**
 * A client's default `fallback` as it applies to a create of `type`: the create's own type and types not offered
 * here are left out (the default serves creates of every type), at most `maxFallbackSteps` kept.
 */
export function defaultFallback(type: RequestType, fallback: readonly string[], allowed: readonly RequestType[]): RequestType[] {
  const steps = allowed.filter((t) => t !== type && fallback.includes(t));
  return steps.sort((a, b) => fallback.indexOf(a) - fallback.indexOf(b)).slice(0, maxFallbackSteps);
}

/** Whether a verification's next step is due now (time-driven): still PENDING and in time, its clock run out. */
export function stepDue(v: Verification, now: Date): boolean {
  return (
    v.status === 'PENDING' &&
    v.steps < v.workflow.length &&
    v.nextStepAt !== null &&
    v.nextStepAt.getTime() <= now.getTime() &&
    now.getTime() < v.expiresAt.getTime()
  );
}

/**
 * The verification moved to its next step, whose send goes out through `channel` (the step's driver's): the same
 * code, a fresh latest send (QUEUED, no provider yet), the step counted, its clock not started until the step's
 * code is sent. `type` keeps the create's word. Null when no step is left.
 */
export function nextStep(v: Verification, channel: Delivery['channel'], now: Date): { readonly type: RequestType; readonly next: Verification } | null {
  const [type] = fallbackLeft(v);
  if (type === undefined) return null;
  return {
    type,
    next: {
      ...v,
      steps: v.steps + 1,
      nextStepAt: null,
      failoverAt: null,
      delivery: { channel, provider: null, messageId: null, status: 'QUEUED', sends: v.delivery.sends, updatedAt: now },
    },
  };
}
