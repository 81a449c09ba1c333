import net from 'node:net';

/** What came back on a raw connection: the parsed answer, if any, and how long until the connection closed. */
export interface RawAnswer {
  readonly status: number | null;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Milliseconds from connecting until the server closed the connection (or the wait ended). */
  readonly closedAfterMs: number;
  /** False when the wait ended with the connection still open. */
  readonly closed: boolean;
}

/** Parses the first HTTP/1.1 answer out of raw bytes. */
export function parseAnswer(raw: string): Pick<RawAnswer, 'status' | 'headers' | 'body'> {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { status: null, headers: {}, body: raw };
  const [statusLine = '', ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  return { status: status ? Number(status) : null, headers, body: raw.slice(end + 4) };
}

/** A raw TCP connection to 127.0.0.1:port that can be written to in parts and waited on. */
export class RawConnection {
  readonly socket: net.Socket;
  private readonly started = Date.now();
  private data = '';
  private closedAt: number | null = null;
  private readonly closing: Promise<void>;
  readonly connected: Promise<void>;

  constructor(port: number) {
    this.socket = net.connect({ host: '127.0.0.1', port });
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => (this.data += chunk));
    this.socket.on('error', () => undefined);
    this.connected = new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('error', reject);
    });
    this.closing = new Promise((resolve) =>
      this.socket.once('close', () => {
        this.closedAt = Date.now();
        resolve();
      }),
    );
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** Everything received so far. */
  received(): string {
    return this.data;
  }

  get isClosed(): boolean {
    return this.closedAt !== null;
  }

  /** Waits until the server closes the connection, or `timeoutMs`, and reads what it sent. */
  async answer(timeoutMs: number): Promise<RawAnswer> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.closing, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    const closed = this.closedAt !== null;
    return { ...parseAnswer(this.data), closed, closedAfterMs: (this.closedAt ?? Date.now()) - this.started };
  }

  /** Waits until the first complete answer (headers and a Content-Length body) has arrived. */
  async response(timeoutMs: number): Promise<RawAnswer> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && !this.isClosed) {
      const parsed = parseAnswer(this.data);
      const length = Number(parsed.headers['content-length'] ?? NaN);
      if (parsed.status !== null && Buffer.byteLength(parsed.body) >= length) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    return { ...parseAnswer(this.data), closed: this.isClosed, closedAfterMs: Date.now() - this.started };
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Sends `text` on a new connection and waits for the server to answer and close it. */
export async function rawExchange(port: number, text: string, timeoutMs = 5000): Promise<RawAnswer> {
  const c = new RawConnection(port);
  await c.connected;
  c.write(text);
  const answer = await c.answer(timeoutMs);
  c.close();
  return answer;
}
