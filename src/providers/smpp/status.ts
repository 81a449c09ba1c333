import type { SendResult } from '../../channels/provider-port.js';

/** submit_sm_resp command_status values the provider tells apart (SMPP 3.4 section 5.1.3). */
export const STATUS = {
  ESME_ROK: 0x00,
  ESME_RINVBNDSTS: 0x04,
  ESME_RSYSERR: 0x08,
  ESME_RINVSRCADR: 0x0a,
  ESME_RINVDSTADR: 0x0b,
  ESME_RMSGQFUL: 0x14,
  ESME_RINVSRCTON: 0x48,
  ESME_RINVSRCNPI: 0x49,
  ESME_RINVDSTTON: 0x50,
  ESME_RINVDSTNPI: 0x51,
  ESME_RTHROTTLED: 0x58,
  ESME_RX_T_APPN: 0x64,
  ESME_RINVSRCADDRSUBUNIT: 0x105,
  ESME_RINVDSTADDRSUBUNIT: 0x106,
} as const;

/** Retrying later may help: the SMSC is busy, throttling us, or failed inside. */
const TRANSIENT = new Set<number>([
  STATUS.ESME_RTHROTTLED, STATUS.ESME_RMSGQFUL, STATUS.ESME_RSYSERR, STATUS.ESME_RINVBNDSTS, STATUS.ESME_RX_T_APPN,
]);
/** Something wrong with an address: retrying the same message through this SMSC cannot help. */
const ADDRESS = new Set<number>([
  STATUS.ESME_RINVSRCADR, STATUS.ESME_RINVDSTADR, STATUS.ESME_RINVSRCTON, STATUS.ESME_RINVSRCNPI,
  STATUS.ESME_RINVDSTTON, STATUS.ESME_RINVDSTNPI, STATUS.ESME_RINVSRCADDRSUBUNIT, STATUS.ESME_RINVDSTADDRSUBUNIT,
]);
const NAMES = new Map<number, string>(Object.entries(STATUS).map(([name, value]) => [value, name]));

/** `0x0000000B`, as SMSC documentation writes command_status. */
export function hex(status: number): string {
  return `0x${status.toString(16).toUpperCase().padStart(8, '0')}`;
}

/** The name and hex value of a status, for reasons and logs. */
export function describeStatus(status: number): string {
  const name = NAMES.get(status);
  return name ? `${name} (${hex(status)})` : hex(status);
}

/** What a non-zero submit_sm_resp (or generic_nack) status means for the send. */
export function refusal(status: number): Exclude<SendResult, { kind: 'accepted' }> {
  const what = describeStatus(status);
  if (TRANSIENT.has(status)) return { kind: 'transient', reason: `SMSC answered ${what}` };
  if (ADDRESS.has(status)) return { kind: 'permanent', reason: `SMSC refused an address: ${what}` };
  return { kind: 'permanent', reason: `SMSC refused the message: ${what}` };
}
