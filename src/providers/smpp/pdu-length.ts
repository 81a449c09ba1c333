import type { Readable } from 'node:stream';
import { PDU } from 'smpp';

/** SMPP 3.4 section 3.2: every PDU starts with a 16-byte header, which its command_length counts. */
export const pduHeaderLength = 16;

let guarded = false;

/**
 * Makes the smpp package refuse a PDU whose command_length is shorter than its header. The package reads such a
 * length and then waits for length - 4 more bytes: 4 asks for none, so it waits forever and decodes nothing more
 * on the connection (the bind freezes, submit_sm_resp go unread until the time-out, enquire_link too); 0 it takes
 * for "no data yet", and reads the next PDU's bytes as a length. Thrown here, the package reports it as the
 * session's 'error', on which the link drops the connection and binds again, as after any drop. Once per process:
 * the package's reader is shared by every session.
 */
export function refuseShortPdus(): void {
  if (guarded) return;
  guarded = true;
  const read = PDU.commandLength;
  PDU.commandLength = (stream: Readable): number | false => {
    const length = read(stream);
    if (length !== false && length < pduHeaderLength) {
      throw new Error(`malformed PDU: command_length ${length} is shorter than the ${pduHeaderLength}-byte header`);
    }
    return length;
  };
}
