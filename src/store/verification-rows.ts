import type { Insertable, Selectable } from 'kysely';
import type { PhoneHistory } from '../domain/limits.js';
import type { SendJob } from '../domain/send-job.js';
import type { Verification, VerificationStatus, VerificationType } from '../domain/verification.js';
import type { SendJobsTable, VerificationsTable } from './schema.js';

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
    counter: v.counter,
    webhook_url: v.webhookUrl,
    reference: v.reference,
    created_at: v.createdAt,
    updated_at: v.updatedAt,
    expires_at: v.expiresAt,
  };
}

export function toVerification(row: Selectable<VerificationsTable>): Verification {
  return {
    id: row.id,
    clientId: row.client_id,
    type: row.type as VerificationType,
    status: row.status as VerificationStatus,
    otp: row.otp,
    phoneNumber: row.phone_number,
    countryCode: row.country_code,
    pairedNumber: row.paired_number,
    counter: row.counter,
    webhookUrl: row.webhook_url,
    reference: row.reference,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
  };
}

/** A send job's row: due at once, or held for the process that makes the first attempt itself (attempt 1). */
export function sendJobRow(job: SendJob): Insertable<SendJobsTable> {
  return {
    verification_id: job.verificationId,
    channel: job.channel,
    sender: job.sender,
    status: 'pending',
    attempts: job.attempts,
    next_attempt_at: job.claimedUntil ?? job.createdAt,
    last_error: null,
    created_at: job.createdAt,
    updated_at: job.createdAt,
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
