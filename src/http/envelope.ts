import type { FastifyReply } from 'fastify';
import { errorCatalogue, type ErrorCode, type BudgetProblem, type FieldProblem, type RuleProblem, type ThrottleProblem } from '../domain/error-catalogue.js';
import { allowedRisk, type FactorEntry, type Risk } from '../domain/risk.js';
import { attemptRecord, fallbackLeft, latestTurn, shownCode, verificationCost, type AttemptRecord, type Verification } from '../domain/verification.js';

/** The record as clients see it (seed 2.2 plus contract 3.4's fields). */
export interface PublicRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  expiresAt: string;
  otp: string | null;
  phoneNumber: string;
  country: string;
  countryCode: string;
  counter: number;
  pairedNumber: string;
  type: string;
  status: string;
  webhookUrl: string | null;
  reference: string | null;
  failureReason: string | null;
  delivery: {
    channel: string;
    provider: string | null;
    status: string;
    sends: number;
    updatedAt: string;
    attempts: number;
    lastError: AttemptRecord['lastError'];
  };
  fallback: string[];
  deliveries: AttemptRecord[];
  cost: { amount: string; currency: string; unknownSends: number };
  risk: Risk;
}

/** The record of `v`; `currency`: COST_CURRENCY, which its cost is in. */
export function publicRecord(v: Verification, currency: string): PublicRecord {
  return {
    id: v.id,
    createdAt: v.createdAt.toISOString(),
    updatedAt: v.updatedAt.toISOString(),
    expiresAt: v.expiresAt.toISOString(),
    // A client that withholds codes never sees one: the code goes only to the phone.
    otp: shownCode(v),
    phoneNumber: v.phoneNumber,
    country: v.countryCode,
    countryCode: v.countryCode,
    counter: v.counter,
    pairedNumber: v.pairedNumber,
    type: v.type,
    status: v.status,
    webhookUrl: v.webhookUrl,
    reference: v.reference,
    failureReason: v.failureReason,
    delivery: {
      channel: v.delivery.channel,
      provider: v.delivery.provider,
      status: v.delivery.status,
      sends: v.delivery.sends,
      updatedAt: v.delivery.updatedAt.toISOString(),
      ...latestTurn(v),
    },
    fallback: [...fallbackLeft(v)],
    deliveries: v.deliveries.map(attemptRecord),
    cost: { ...verificationCost(v), currency },
    risk: v.risk ?? allowedRisk,
  };
}

export interface ErrorOptions {
  readonly details?: readonly (FieldProblem | RuleProblem | BudgetProblem | ThrottleProblem | FactorEntry)[];
  /** The record to send with the error, as publicRecord made it. */
  readonly data?: PublicRecord;
  readonly message?: string;
  readonly retryAfterSeconds?: number;
}

/** The one error shape of /v1 (contract 5). */
export function errorBody(code: ErrorCode, options: ErrorOptions = {}) {
  return {
    status: false as const,
    message: options.message ?? errorCatalogue[code].message,
    error: { code, ...(options.details && { details: options.details }) },
    ...(options.data && { data: options.data }),
  };
}

export function sendError(reply: FastifyReply, code: ErrorCode, options: ErrorOptions = {}): FastifyReply {
  if (options.retryAfterSeconds !== undefined) reply.header('retry-after', String(options.retryAfterSeconds));
  return reply.code(errorCatalogue[code].status).type('application/json; charset=utf-8').send(errorBody(code, options));
}

/** 409 VERIFICATION_NOT_PENDING with the record as it reads now (verify, resend and cancel answer alike). */
export function sendNotPending(reply: FastifyReply, v: Verification, currency: string): FastifyReply {
  return sendError(reply, 'VERIFICATION_NOT_PENDING', { message: `The verification is ${v.status}`, data: publicRecord(v, currency) });
}

/** 404 NOT_FOUND for a verification id that is unknown or another client's. */
export function sendVerificationNotFound(reply: FastifyReply): FastifyReply {
  return sendError(reply, 'NOT_FOUND', { message: 'Verification not found' });
}
