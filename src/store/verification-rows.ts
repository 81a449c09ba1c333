import type { Insertable, Selectable, SelectQueryBuilder } from 'kysely';
import { parseChannel, parseDeliveryChannel } from '../domain/channel-driver.js';
import type { PhoneHistory } from '../domain/limits.js';
import type { SendJob, SendJobStatus } from '../domain/send-job.js';
import type { Signals } from '../domain/signals.js';
import {
  attemptRecord,
  type Delivery,
  type DeliveryAttempt,
  type RequestType,
  type FailureReason,
  type SendError,
  type SendErrorCode,
  type SendStatus,
  type Verification,
  type VerificationStatus,
  type VerificationType,
} from '../domain/verification.js';
import type { DueSend } from '../domain/verification-store.js';
import { isRiskRule, isRuleMode, riskRules, type Risk, type RiskVerdict } from '../domain/risk.js';
import type { Database, RiskJson, SendJobsTable, VerificationsTable } from './schema.js';

export function verificationRow(v: Verification): Insertable<VerificationsTable> {
  return {
    id: v.id,
    client_id: v.clientId,
    type: v.type,
    status: v.status,
    otp: v.otp,
    phone_number: v.phoneNumber,
    country_code: v.countryCode,
    paired_number: v.pairedNumber,
    paired_e164: v.pairedE164,
    counter: v.counter,
    webhook_url: v.webhookUrl,
    reference: v.reference,
    created_at: v.createdAt,
    updated_at: v.updatedAt,
    expires_at: v.expiresAt,
    failure_reason: v.failureReason,
    send_requests: v.sendRequests,
    last_send_at: v.lastSendAt,
    locale: v.locale,
    code_withheld: v.codeWithheld,
    test_number: v.testNumber,
    message_text: v.messageText ?? null,
    relayed: v.relayed ?? false,
    risk: v.risk && (v.risk.verdict !== 'allow' || v.risk.factors.length > 0) ? v.risk : null,
    region_code: v.regionCode,
    network: v.network ?? null,
    delivery_channel: v.delivery.channel,
    delivery_provider: v.delivery.provider,
    delivery_message_id: v.delivery.messageId,
    delivery_status: v.delivery.status,
    delivery_sends: v.delivery.sends,
    delivery_updated_at: v.delivery.updatedAt,
    workflow: [...v.workflow],
    steps: v.steps,
    fallback_after_seconds: v.fallbackAfterSeconds,
    next_step_at: v.nextStepAt,
    failover_at: v.failoverAt,
    deliveries: attemptsJson(v.deliveries),
  };
}

/** The attempts as stored (jsonb). */
export function attemptsJson(attempts: readonly DeliveryAttempt[]): string {
  return JSON.stringify(attempts.map(attemptRecord));
}

/**
 * The attempts as read back; a row made before they were kept (0015) shows its latest send as its one attempt.
 */
function toAttempts(raw: unknown, delivery: Delivery): DeliveryAttempt[] {
  const list = typeof raw === 'string' ? (JSON.parse(raw) as unknown) : raw;
  const attempts = Array.isArray(list)
    ? list.flatMap((a: unknown): DeliveryAttempt[] => {
        if (typeof a !== 'object' || a === null) return [];
        const o = a as Record<string, unknown>;
        if (typeof o.channel !== 'string' || typeof o.provider !== 'string' || typeof o.at !== 'string') return [];
        return [
          {
            channel: o.channel as Delivery['channel'],
            provider: o.provider,
            status: sendStatuses.find((s) => s === o.status) ?? 'SENT',
            at: new Date(o.at),
            // Attempts stored before they counted calls (0030) were one call each.
            attempts: typeof o.attempts === 'number' ? o.attempts : 1,
            lastError: toSendError(o.lastError),
            cost: typeof o.cost === 'string' ? o.cost : null,
          },
        ];
      })
    : [];
  if (attempts.length === 0 && delivery.provider !== null) {
    return [{ channel: delivery.channel, provider: delivery.provider, status: delivery.status, at: delivery.updatedAt, attempts: 1, lastError: null }];
  }
  return attempts;
}

const sendErrorCodes: readonly SendErrorCode[] = ['PROVIDER_UNAVAILABLE', 'PROVIDER_REFUSED', 'UNDELIVERED'];

function toSendError(raw: unknown): SendError | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const { code, message, at } = raw as Record<string, unknown>;
  const known = sendErrorCodes.find((c) => c === code);
  if (!known || typeof message !== 'string' || typeof at !== 'string') return null;
  return { code: known, message, at: new Date(at) };
}

const requestTypes: readonly string[] = ['SEND_SMS', 'DROPPED_CALL', 'WHATSAPP', 'VOICE_CALL', 'TELEGRAM', 'SILENT'];

/** A create's signals as kept beside its verification (0020): the limits' keys, and all of them as given. */
export function signalColumns(signals: Signals | null): Pick<Insertable<VerificationsTable>, 'signal_ip' | 'signal_network' | 'signal_device' | 'signals'> {
  // Every row names the same columns, so that a group's insert is one statement text whatever its creates sent.
  if (!signals) return { signal_ip: null, signal_network: null, signal_device: null, signals: null };
  return {
    signal_ip: signals.ip?.address ?? null,
    signal_network: signals.ip?.network ?? null,
    signal_device: signals.deviceId,
    signals: JSON.stringify({
      ip: signals.ip?.address ?? null,
      deviceId: signals.deviceId,
      userAgent: signals.userAgent,
      appVersion: signals.appVersion,
      platform: signals.platform,
    }),
  };
}

const verdicts: readonly RiskVerdict[] = ['allow', 'challenge', 'block', 'shadow_block'];

/** The risk column as the domain reads it; what this version does not know of is left out. */
function riskOf(json: RiskJson): Risk {
  return {
    verdict: verdicts.find((v) => v === json.verdict) ?? 'allow',
    factors: json.factors.flatMap((f) =>
      isRiskRule(f.rule) && isRuleMode(f.mode) && riskRules[f.rule] === f.factor ? [{ factor: riskRules[f.rule], rule: f.rule, mode: f.mode }] : [],
    ),
  };
}

const failureReasons: readonly FailureReason[] = ['MAX_ATTEMPTS', 'UNDELIVERABLE', 'CANCELED'];
const sendStatuses: readonly SendStatus[] = ['QUEUED', 'SENT', 'DELIVERED', 'UNDELIVERED', 'FAILED'];

export function toVerification(row: Selectable<VerificationsTable>): Verification {
  const delivery: Delivery = {
    channel: parseDeliveryChannel(row.delivery_channel) ?? 'SMS',
    provider: row.delivery_provider,
    messageId: row.delivery_message_id,
    status: sendStatuses.find((s) => s === row.delivery_status) ?? 'QUEUED',
    sends: row.delivery_sends,
    updatedAt: row.delivery_updated_at ?? row.created_at,
  };
  return {
    id: row.id,
    clientId: row.client_id,
    type: row.type as VerificationType,
    status: row.status as VerificationStatus,
    otp: row.otp,
    phoneNumber: row.phone_number,
    countryCode: row.country_code,
    pairedNumber: row.paired_number,
    pairedE164: row.paired_e164,
    sendRequests: row.send_requests,
    lastSendAt: row.last_send_at,
    locale: row.locale,
    codeWithheld: row.code_withheld,
    testNumber: row.test_number,
    ...(row.message_text !== null && { messageText: row.message_text }),
    ...(row.relayed && { relayed: true }),
    ...(row.risk !== null && { risk: riskOf(row.risk) }),
    regionCode: row.region_code,
    ...(row.network !== null && { network: row.network }),
    counter: row.counter,
    webhookUrl: row.webhook_url,
    reference: row.reference,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
    failureReason: failureReasons.find((r) => r === row.failure_reason) ?? null,
    delivery,
    deliveries: toAttempts(row.deliveries, delivery),
    workflow: row.workflow.filter((t): t is RequestType => requestTypes.includes(t)),
    steps: row.steps,
    fallbackAfterSeconds: row.fallback_after_seconds,
    nextStepAt: row.next_step_at,
    failoverAt: row.failover_at,
  };
}

/** A send job's row; a claimed one falls due again only when its claim runs out. */
export function sendJobRow(job: SendJob): Insertable<SendJobsTable> {
  return {
    verification_id: job.verificationId,
    channel: job.channel,
    sender: job.sender,
    status: job.status,
    attempts: job.attempts,
    provider: job.provider,
    provider_failures: job.providerFailures,
    next_attempt_at: job.claimedUntil ?? job.dueAt,
    last_error: job.lastError,
    created_at: job.createdAt,
    updated_at: job.createdAt,
  };
}

const jobStatuses: readonly SendJobStatus[] = ['pending', 'sent', 'failed'];

/** A send job as read; `claimedUntil` is the lease when the reader has just claimed it, else null. */
export function toSendJob(row: Selectable<SendJobsTable>, claimedUntil: Date | null): SendJob {
  const channel = parseChannel(row.channel);
  // A job keeps the channel it was written with; one no driver knows is an error, never another channel.
  if (!channel) throw new Error(`send job ${row.verification_id} has unknown channel "${row.channel}"`);
  return {
    verificationId: row.verification_id,
    channel,
    sender: row.sender,
    status: jobStatuses.find((s) => s === row.status) ?? 'pending',
    attempts: row.attempts,
    provider: row.provider,
    providerFailures: row.provider_failures,
    dueAt: row.next_attempt_at,
    claimedUntil,
    lastError: row.last_error,
    createdAt: row.created_at,
  };
}

/** What the phone limits look at, from the creation times of a number's recent verifications. */
export function historyOf(createdAt: readonly Date[], lookBackFrom: Date, windowFrom: Date): PhoneHistory {
  const inLookBack = createdAt.filter((t) => t > lookBackFrom);
  const inWindow = createdAt.filter((t) => t > windowFrom);
  const earliest = (ts: readonly Date[]) => ts.reduce<Date | null>((m, t) => (m === null || t < m ? t : m), null);
  const latest = (ts: readonly Date[]) => ts.reduce<Date | null>((m, t) => (m === null || t > m ? t : m), null);
  return { countInWindow: inWindow.length, oldestInWindow: earliest(inWindow), latest: latest(inLookBack) };
}

/** The column that says when a PENDING verification's send falls due by the clock, each behind a partial index. */
export const dueColumn = { step: 'next_step_at', failover: 'failover_at' } as const satisfies Record<DueSend, keyof VerificationsTable>;

/** `q` narrowed to the verifications whose `kind` of send is due at `now`, still in time. */
export function dueSends<O>(q: SelectQueryBuilder<Database, 'verifications', O>, kind: DueSend, now: Date): SelectQueryBuilder<Database, 'verifications', O> {
  const column = dueColumn[kind];
  return q.where(column, 'is not', null).where(column, '<=', now).where('expires_at', '>', now);
}
