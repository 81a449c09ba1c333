import { maxMessageBytes } from './message.js';

/**
 * Cuts a TCP byte stream into SIP messages by their Content-Length (RFC 3261 section 18.3, where it is
 * mandatory). Keep-alive CRLFs between messages (RFC 5626) are skipped. A head or body past maxMessageBytes
 * means the peer is not speaking SIP to us: `push` then returns 'overflow' and the connection should be closed.
 */
export class StreamFramer {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly onMessage: (message: Buffer) => void) {}

  push(chunk: Buffer): 'ok' | 'overflow' {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      let start = 0;
      while (start < this.buffered.length && (this.buffered[start] === 0x0d || this.buffered[start] === 0x0a)) start++;
      if (start > 0) this.buffered = this.buffered.subarray(start);
      const headEnd = this.buffered.indexOf('\r\n\r\n');
      if (headEnd < 0) return this.buffered.length > maxMessageBytes ? 'overflow' : 'ok';
      const head = this.buffered.subarray(0, headEnd).toString('latin1');
      const length = /^(?:content-length|l)[ \t]*:[ \t]*(\d+)/im.exec(head)?.[1];
      const bodyLength = length === undefined ? 0 : Number(length);
      const total = headEnd + 4 + bodyLength;
      if (total > maxMessageBytes) return 'overflow';
      if (this.buffered.length < total) return 'ok';
      const message = this.buffered.subarray(0, total);
      this.buffered = this.buffered.subarray(total);
      this.onMessage(message);
    }
  }
}
