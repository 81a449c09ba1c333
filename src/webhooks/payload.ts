import type { EventKind, WebhookPayload } from '../domain/events.js';
import type { VerificationStatus } from '../domain/verification.js';

const eventKinds: readonly string[] = ['action.otp.success', 'action.otp.failed', 'action.otp.expired'];
const statuses: readonly string[] = ['PENDING', 'SUCCESS', 'FAILED', 'EXPIRED'];

/** Reads a payload back from the outbox (jsonb, untyped); null when it is not one. */
export function parseStoredPayload(value: unknown): WebhookPayload | null {
  if (!isObject(value) || typeof value.event !== 'string' || !eventKinds.includes(value.event)) return null;
  const d = value.data;
  if (!isObject(d)) return null;
  const strings = ['id', 'type', 'createdAt', 'countryCode', 'phoneNumber'] as const;
  if (strings.some((k) => typeof d[k] !== 'string')) return null;
  // Null when the client withholds codes (contract 9).
  if (d.otp !== null && typeof d.otp !== 'string') return null;
  if (typeof d.status !== 'string' || !statuses.includes(d.status)) return null;
  if (d.reference !== null && typeof d.reference !== 'string') return null;
  const failureReason = typeof d.failureReason === 'string' ? d.failureReason : null;
  return {
    event: value.event as EventKind,
    data: {
      id: String(d.id),
      otp: d.otp,
      type: String(d.type),
      status: d.status as VerificationStatus,
      createdAt: String(d.createdAt),
      countryCode: String(d.countryCode),
      phoneNumber: String(d.phoneNumber),
      reference: d.reference,
      failureReason,
    },
  };
}

/**
 * The request body, fields in the contract's order. jsonb does not keep key order, so the body is rebuilt
 * rather than echoed; every attempt of an event sends the same bytes.
 */
export function serializePayload(p: WebhookPayload): string {
  const d = p.data;
  return JSON.stringify({
    event: p.event,
    data: {
      id: d.id,
      otp: d.otp,
      type: d.type,
      status: d.status,
      createdAt: d.createdAt,
      countryCode: d.countryCode,
      phoneNumber: d.phoneNumber,
      reference: d.reference,
      failureReason: d.failureReason,
    },
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
