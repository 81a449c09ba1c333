import dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { parseMessage, type SipMessage } from './message.js';
import type { SipTrunk } from './settings.js';
import { StreamFramer } from './stream-framer.js';

/** The address and port written into Via and Contact: where the trunk reaches us. */
export interface LocalAddress {
  readonly address: string;
  readonly port: number;
}

/** One message from the trunk, with the way to answer it on the path it came by. */
export type MessageHandler = (message: SipMessage, reply: (data: Buffer) => void) => void;

/** The one path to the trunk: a UDP socket, or a TCP connection opened on first use and again after it drops. */
export interface SipTransport {
  readonly protocol: 'UDP' | 'TCP';
  /** TCP retransmits by itself; over UDP the transaction layer does (RFC 3261 section 17.1). */
  readonly reliable: boolean;
  /** Ready to send (bound, or connected within the time-out); rejects with a short reason when it cannot be. */
  open(): Promise<LocalAddress>;
  /** Sends one message; a failure shows up as a missing answer, which every wait bounds. */
  send(data: Buffer): void;
  close(): Promise<void>;
}

export interface TransportOptions {
  readonly trunk: SipTrunk;
  /** The address to bind (and to advertise, unless it is a wildcard); null: any. */
  readonly localAddress: string | null;
  /** UDP: the port to bind, 0 for one the system picks. TCP connections always go out from a port the system picks. */
  readonly localPort: number;
  readonly connectTimeoutMs: number;
  readonly onMessage: MessageHandler;
  /** A socket-level problem, for the log (never a message's content). */
  readonly onError: (reason: string) => void;
}

export function createTransport(options: TransportOptions): SipTransport {
  return options.trunk.transport === 'tcp' ? new TcpTransport(options) : new UdpTransport(options);
}

const isWildcard = (address: string | null): boolean => address === null || address === '0.0.0.0' || address === '::';

/** The trunk's address, looked up once (a name's A/AAAA record; SRV and NAPTR are not followed). */
async function trunkAddress(trunk: SipTrunk): Promise<{ address: string; family: 4 | 6 }> {
  if (net.isIP(trunk.host)) return { address: trunk.host, family: net.isIPv6(trunk.host) ? 6 : 4 };
  const found = await lookup(trunk.host);
  return { address: found.address, family: found.family === 6 ? 6 : 4 };
}

class UdpTransport implements SipTransport {
  readonly protocol = 'UDP';
  readonly reliable = false;
  private opening: Promise<LocalAddress> | null = null;
  private socket: dgram.Socket | null = null;
  /** Datagrams given to send() and not yet handed to the system. */
  private readonly sending = new Set<Promise<void>>();
  private target: { address: string; port: number } | null = null;

  constructor(private readonly options: TransportOptions) {}

  open(): Promise<LocalAddress> {
    this.opening ??= this.bind().catch((err: unknown) => {
      this.opening = null;
      throw err;
    });
    return this.opening;
  }

  private async bind(): Promise<LocalAddress> {
    const { trunk, localAddress, localPort } = this.options;
    const remote = await trunkAddress(trunk);
    const socket = dgram.createSocket(remote.family === 6 ? 'udp6' : 'udp4');
    socket.on('message', (data, from) => {
      const message = parseMessage(data);
      if (message) this.options.onMessage(message, (answer) => socket.send(answer, from.port, from.address));
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ port: localPort, ...(localAddress !== null && !isWildcard(localAddress) && { address: localAddress }), exclusive: true }, () => {
        socket.off('error', reject);
        resolve();
      });
    }).catch((err: unknown) => {
      socket.close();
      throw new Error(`cannot bind UDP ${localAddress ?? '*'}:${localPort}: ${describe(err)}`);
    });
    // Past the bind, an error (a send to an unreachable network) must not end the process: a lost datagram is
    // what UDP allows, and the waits that follow are bounded.
    socket.on('error', (err) => this.options.onError(`UDP socket: ${describe(err)}`));
    this.socket = socket;
    this.target = { address: remote.address, port: trunk.port };
    const advertised = isWildcard(localAddress) ? await routeTo(remote) : (localAddress ?? '');
    return { address: advertised, port: socket.address().port };
  }

  send(data: Buffer): void {
    if (!this.socket || !this.target) return;
    // Counted until handed to the system: a close right after (the BYE of a call ended at stop) must not drop it.
    let settle: () => void = () => undefined;
    const sent = new Promise<void>((resolve) => (settle = resolve));
    this.sending.add(sent);
    this.socket.send(data, this.target.port, this.target.address, () => {
      this.sending.delete(sent);
      settle();
    });
  }

  async close(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    this.opening = null;
    await Promise.race([Promise.all([...this.sending]), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
}

/** The local address the system would send from to reach `remote` (a connected UDP socket sends nothing). */
async function routeTo(remote: { address: string; family: 4 | 6 }): Promise<string> {
  const probe = dgram.createSocket(remote.family === 6 ? 'udp6' : 'udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.connect(9, remote.address, () => resolve());
    });
    return probe.address().address;
  } finally {
    probe.close();
  }
}

class TcpTransport implements SipTransport {
  readonly protocol = 'TCP';
  readonly reliable = true;
  private connecting: Promise<LocalAddress> | null = null;
  private socket: net.Socket | null = null;
  private closed = false;

  constructor(private readonly options: TransportOptions) {}

  open(): Promise<LocalAddress> {
    if (this.closed) return Promise.reject(new Error('the SIP transport is closed'));
    this.connecting ??= this.connect().catch((err: unknown) => {
      this.connecting = null;
      throw err;
    });
    return this.connecting;
  }

  private connect(): Promise<LocalAddress> {
    const { trunk, localAddress, connectTimeoutMs } = this.options;
    return new Promise((resolve, reject) => {
      const socket = net.connect({
        host: trunk.host,
        port: trunk.port,
        ...(localAddress !== null && !isWildcard(localAddress) && { localAddress }),
        noDelay: true,
      });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`TCP connection to the trunk not made within ${connectTimeoutMs} ms`));
      }, connectTimeoutMs);
      const framer = new StreamFramer((data) => {
        const message = parseMessage(data);
        if (message) this.options.onMessage(message, (answer) => socket.write(answer));
      });
      socket.on('data', (chunk: Buffer) => {
        if (framer.push(chunk) === 'overflow') {
          this.options.onError('TCP: the trunk sent a message too large to be SIP; connection closed');
          socket.destroy();
        }
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        this.socket = socket;
        resolve({ address: socket.localAddress ?? '', port: socket.localPort ?? 0 });
      });
      socket.on('error', (err) => {
        clearTimeout(timer);
        if (this.socket === socket) this.options.onError(`TCP connection to the trunk: ${describe(err)}`);
        reject(new Error(`TCP connection to the trunk failed: ${describe(err)}`));
      });
      socket.on('close', () => {
        clearTimeout(timer);
        // The next call connects again.
        if (this.socket === socket) {
          this.socket = null;
          this.connecting = null;
        }
      });
    });
  }

  send(data: Buffer): void {
    if (this.socket?.writable) this.socket.write(data);
  }

  async close(): Promise<void> {
    this.closed = true;
    const socket = this.socket;
    this.socket = null;
    this.connecting = null;
    if (socket) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.end();
        setTimeout(() => socket.destroy(), 1_000).unref();
      });
    }
  }
}

/** An error's code and message, with nothing of what was sent. */
export function describe(err: unknown): string {
  if (!(err instanceof Error)) return 'failed';
  const code = 'code' in err && typeof err.code === 'string' ? err.code : null;
  return code && !err.message.includes(code) ? `${code} ${err.message}` : err.message;
}
