import type { PDU } from 'smpp';
import type { DeliveryReceipt } from '../../channels/provider-port.js';
import { DATA_CODING_GSM, encodeGsmLoosely } from './text.js';

/** A delivery receipt read from a deliver_sm, under the id the SMSC gave the part it is about. */
export interface SmscReceipt {
  /** The message_id of the submit_sm_resp it reports on. */
  readonly smscId: string;
  readonly status: DeliveryReceipt['status'];
  readonly detail: string | null;
  readonly at: Date | null;
}

/** esm_class message type bits (2-5): an SMSC delivery receipt, or an intermediate delivery notification. */
const RECEIPT_TYPES = new Set([0x04, 0x20]);

/** The receipt's `stat:` word (SMPP 3.4 appendix B) to our status. */
const STAT: Readonly<Record<string, DeliveryReceipt['status']>> = {
  DELIVRD: 'DELIVERED',
  UNDELIV: 'UNDELIVERED',
  EXPIRED: 'UNDELIVERED',
  REJECTD: 'UNDELIVERED',
  DELETED: 'UNDELIVERED',
  ENROUTE: 'SENT',
  ACCEPTD: 'SENT',
};
/** The message_state TLV's values to the receipt's words, for SMSCs that send the TLV but no text. */
const MESSAGE_STATE = ['', 'ENROUTE', 'DELIVRD', 'EXPIRED', 'DELETED', 'UNDELIV', 'ACCEPTD', 'UNKNOWN', 'REJECTD'];

const field = (pdu: PDU, name: string): unknown => pdu[name];
const numberField = (pdu: PDU, name: string): number | null => {
  const v = field(pdu, name);
  return typeof v === 'number' ? v : null;
};
const stringField = (pdu: PDU, name: string): string | null => {
  const v = field(pdu, name);
  return typeof v === 'string' && v.length > 0 ? v.replace(/\0+$/, '') : null;
};

/** True when a deliver_sm is a delivery receipt rather than a message from a phone. */
export function isReceipt(pdu: PDU): boolean {
  return RECEIPT_TYPES.has((numberField(pdu, 'esm_class') ?? 0) & 0x3c);
}

/**
 * The receipt text as the SMSC sent it. The smpp package decodes short_message by data_coding; for data_coding
 * 0 and 1 it maps the octets through GSM 03.38, which this undoes so that the ASCII receipt text reads as sent.
 */
function receiptText(pdu: PDU): string {
  const dataCoding = (numberField(pdu, 'data_coding') ?? 0) & 0x0f;
  for (const name of ['short_message', 'message_payload']) {
    const v = field(pdu, name);
    const message: unknown = typeof v === 'object' && v !== null && 'message' in v ? v.message : v;
    if (Buffer.isBuffer(message) && message.length > 0) return message.toString('latin1');
    if (typeof message === 'string' && message.length > 0) {
      return dataCoding === DATA_CODING_GSM || dataCoding === 1 ? encodeGsmLoosely(message).toString('latin1') : message;
    }
  }
  return '';
}

/** `done date:YYMMDDhhmm[ss]`, read as UTC: the format carries no zone, and most SMSCs keep UTC. */
function doneDate(text: string): Date | null {
  const m = /done date:(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?/i.exec(text);
  if (!m) return null;
  const [, yy, mo, dd, hh, mi, ss] = m.map((p) => Number(p ?? 0));
  const at = new Date(Date.UTC(2000 + (yy ?? 0), (mo ?? 1) - 1, dd ?? 1, hh ?? 0, mi ?? 0, ss ?? 0));
  return Number.isNaN(at.getTime()) ? null : at;
}

/**
 * Reads a receipt deliver_sm: the id from the receipted_message_id TLV, else the text's `id:` field; the state
 * from the text's `stat:`, else the message_state TLV. Null when it is not a receipt or names no message.
 */
export function parseReceipt(pdu: PDU): SmscReceipt | null {
  if (!isReceipt(pdu)) return null;
  const text = receiptText(pdu);
  const smscId = stringField(pdu, 'receipted_message_id') ?? /(?:^|\s)id:(\S+)/i.exec(text)?.[1] ?? null;
  if (!smscId) return null;
  const state = numberField(pdu, 'message_state');
  const stat = (/\bstat:(\w+)/i.exec(text)?.[1] ?? (state !== null ? MESSAGE_STATE[state] : undefined) ?? 'UNKNOWN').toUpperCase();
  const err = /\berr:(\w+)/i.exec(text)?.[1];
  return {
    smscId,
    // A state we do not know (UNKNOWN) says nothing final: the message stays on its way.
    status: STAT[stat] ?? 'SENT',
    detail: err ? `${stat} err:${err}` : stat,
    at: doneDate(text),
  };
}
