/**
 * Types for the parts of the `smpp` package (0.5.x, plain JavaScript, no published types) that the smpp
 * provider and its tests use. Decoded PDU fields stay `unknown`: readers parse them (see pdu-fields.ts).
 */
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';

  /** One PDU, as built to send or as decoded; its fields are named as in the SMPP 3.4 specification. */
  export class PDU {
    constructor(command: string, options?: Readonly<Record<string, unknown>>);
    /** The command's name, e.g. 'submit_sm_resp'; 'unknown' for an id the package does not know. */
    readonly command: string;
    readonly command_id: number;
    readonly command_status: number;
    readonly sequence_number: number;
    readonly [field: string]: unknown;
    /**
     * Reads a PDU's command_length off the stream: false when fewer than 4 bytes are there; throws above
     * PDU.maxLength. Every session's reader calls it through the class, so it can be wrapped (pdu-length.ts).
     */
    static commandLength: (stream: import('node:stream').Readable) => number | false;
    isResponse(): boolean;
    /** The response to this request, with its sequence number; generic_nack when the command is unknown. */
    response(options?: Readonly<Record<string, unknown>>): PDU;
  }

  export interface SessionOptions {
    readonly host: string;
    readonly port: number;
    /** Connect with TLS (`ssmpp://`). */
    readonly tls?: boolean;
    readonly servername?: string;
  }

  /** One SMPP connection. Emits 'connect' (or 'secureConnect'), 'pdu' (every decoded PDU), 'close', 'error'. */
  export class Session extends EventEmitter {
    readonly socket: Socket;
    /** Writes `pdu`; `onResponse` gets the response with the same sequence number. False when not writable. */
    send(pdu: PDU, onResponse?: (response: PDU) => void, onSent?: (pdu: PDU) => void): boolean;
    /** Ends the socket once written. */
    close(callback?: () => void): void;
    destroy(callback?: () => void): void;
  }

  export interface Server extends NetServer {
    readonly sessions: Session[];
  }

  export function connect(options: SessionOptions, onConnect?: () => void): Session;
  export function createServer(onSession?: (session: Session) => void): Server;
}
