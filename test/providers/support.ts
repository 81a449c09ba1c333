import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import type { Outgoing, OutgoingSms, Provider, ProviderContext, SendResult } from '../../src/channels/provider-port.js';

/**
 * What the HTTP provider tests share: a context that records the log, a local server that plays the provider's
 * API and its faults, and the checks every provider must pass the same way (time-out, stop, log secrecy). Each
 * test file keeps what is its provider's own: the documented request, answers and receipts.
 */

/** The SMS every provider test sends unless it says otherwise. */
export const sampleSms: OutgoingSms = {
  channel: 'sms',
  sendId: 'send-1',
  verificationId: 'ver-1',
  to: '+2348012345678',
  from: '+14155550100',
  text: 'Your code is 482913',
  code: '482913',
};

/** A context whose logger keeps every line, to check that nothing secret is logged. */
export function recordingContext(callbackUrl: string | null): ProviderContext & { lines: string[] } {
  const lines: string[] = [];
  const log = (obj: object, msg: string) => void lines.push(JSON.stringify({ ...obj, msg }));
  return {
    lines,
    callbackUrl,
    callRingSeconds: 15,
    onReceipt: async () => undefined,
    messageLog: { record: async () => {} },
    logger: { info: log, warn: log, error: log },
  };
}

/** Fails on the first log line that holds any of `hidden` (a code, a text, a credential). */
export function assertLogsHide(lines: readonly string[], hidden: readonly string[]): void {
  for (const line of lines) for (const secret of hidden) assert.ok(!line.includes(secret), `log line leaks "${secret}": ${line}`);
}

/** What the local server saw of one request, read every way a provider's body may be written. */
export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly raw: string;
  /** The body read as a form. */
  readonly form: URLSearchParams;
  /** The body read as JSON; null when it is not. */
  readonly json: unknown;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void;

/** A local server playing a provider's API: every request is kept in `seen`, then answered by `handler`. */
export interface LocalServer {
  /** http://127.0.0.1:<port>, once the suite's `before` has run. */
  url: string;
  handler: Handler;
  readonly seen: Seen[];
}

/** Starts a local server before the enclosing suite and closes it after, connections and all. */
export function localServer(handler: Handler = noAnswer): LocalServer {
  const state: LocalServer = { url: '', handler, seen: [] };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, form: new URLSearchParams(raw), json: parsed(raw) };
      state.seen.push(entry);
      state.handler(req, res, entry);
    });
  });
  before(async () => {
    state.url = await listening(server);
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return state;
}

function parsed(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}

async function listening(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string') throw new Error('the local server has no port');
  return `http://127.0.0.1:${address.port}`;
}

/** Answers with a JSON body. */
export function replyJson(res: http.ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Never answers: the caller's time-out must end the send. */
export const noAnswer: Handler = () => {};

/** Resets the connection before any answer. */
export const resetBeforeAnswer: Handler = (req) => req.socket.destroy();

/** Starts an answer promising more than it sends (`partial`), then closes the connection. */
export function closedMidAnswer(status: number, partial: string): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': '500' });
    res.write(partial);
    setTimeout(() => res.socket?.destroy(), 20);
  };
}

/** Answers as `handler` does, `ms` later. */
export function delayed(handler: Handler, ms = 200): Handler {
  return (req, res, seen) => setTimeout(() => handler(req, res, seen), ms);
}

/** The URL of a port that was just listened on and closed: connecting to it is refused. */
export async function refusedUrl(): Promise<string> {
  const closed = http.createServer();
  const url = await listening(closed);
  await new Promise((resolve) => closed.close(resolve));
  return url;
}

/** Sends one message with a fresh provider, then stops it. */
export async function sendOnce(provider: Provider, message: Outgoing, signal = AbortSignal.timeout(10_000)): Promise<SendResult> {
  try {
    return await provider.send(message, signal);
  } finally {
    await provider.stop();
  }
}

/** No answer before the caller's time-out, or an aborted send: transient with `reason`, promptly. */
export async function assertTimesOutPromptly(send: (signal: AbortSignal) => Promise<SendResult>, reason: string): Promise<void> {
  const started = Date.now();
  assert.deepEqual(await send(AbortSignal.timeout(300)), { kind: 'transient', reason });
  assert.ok(Date.now() - started < 3_000);
  assert.deepEqual(await send(AbortSignal.abort()), { kind: 'transient', reason });
}

/** Sends, and calls stop() twice while the answer is on its way (the handler should be `delayed`). */
export async function sendThroughStop(provider: Provider, message: Outgoing): Promise<SendResult> {
  const sending = provider.send(message, AbortSignal.timeout(5_000));
  await new Promise((r) => setTimeout(r, 50));
  await Promise.all([provider.stop(), provider.stop()]);
  return sending;
}

/** What a provider module declares to the registry: its name, its channels, whether it takes HTTP callbacks. */
export function assertModuleDeclares(
  module: { readonly name: string; readonly channels: readonly string[]; readonly callbacks: boolean },
  declared: { readonly name: string; readonly channels: readonly string[]; readonly callbacks: boolean },
): void {
  assert.equal(module.name, declared.name);
  assert.deepEqual(module.channels, declared.channels);
  assert.equal(module.callbacks, declared.callbacks);
}
