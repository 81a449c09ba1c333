import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SettingValues } from '../../src/channels/provider-port.js';
import { parseTrunkUri } from '../../src/providers/sip/settings.js';
import type { sipSettings } from '../../src/providers/sip/settings.js';
import { repoRoot } from '../support/processes.js';

/**
 * SIPp (Debian's sip-tester) as the far end of a SIP trunk: one scenario of test/peers/sipp/, its %WORDS% filled
 * in, run as a UAS on 127.0.0.2 (the provider sends from 127.0.0.1, so neither takes the other's address for
 * its own) on ports free at the time.
 */

/** The address SIPp listens on. */
export const sippAddress = '127.0.0.2';

/** The sip provider's settings for a trunk at `trunk` (sip:host:port[;transport=...]), sending from loopback. */
export function sipTrunkSettings(trunk: string, more: Partial<SettingValues<typeof sipSettings>> = {}): SettingValues<typeof sipSettings> {
  return {
    SIP_TRUNK_URI: parseTrunkUri(trunk),
    SIP_USERNAME: undefined,
    SIP_PASSWORD: undefined,
    SIP_LOCAL_ADDRESS: '127.0.0.1',
    SIP_LOCAL_PORT: 0,
    SIP_FROM_HOST: undefined,
    SIP_NUMBER_FORMAT: 'e164',
    ...more,
  };
}

/** Why SIPp cannot run here, or null when it can (.ci/run installs sip-tester). */
export function sippMissing(): string | null {
  const probe = spawnSync('sipp', ['-v'], { encoding: 'utf8' });
  return probe.error ? 'sipp is not installed (apt-get install sip-tester)' : null;
}

export interface SippRun {
  /** The port SIPp listens on for SIP. */
  readonly port: number;
  /** SIPp's exit code once it has ended (0: every call went as the scenario says). */
  readonly exited: Promise<number | null>;
  /** What SIPp logged as errors (a failed regexp check, an unexpected message), for assertion messages. */
  errors(): string;
  /** The messages SIPp sent and received, as its -trace_msg file holds them. */
  messages(): string;
  /** What the scenario's <log> actions wrote. */
  logs(): string;
  /** Kills SIPp if still running and removes its files. */
  stop(): void;
}

/** A port free on 127.0.0.2 for both UDP and TCP at the time of asking. */
export async function freePort(address = sippAddress): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const server = net.createServer();
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, address, () => {
        const a = server.address();
        resolve(typeof a === 'object' && a !== null ? a.port : 0);
      });
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const udp = dgram.createSocket('udp4');
    const free = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, address, () => resolve(true));
    });
    closeQuietly(udp);
    if (free) return port;
  }
  throw new Error('no free port found');
}

type SippOptions = { readonly calls?: number; readonly timeoutSeconds?: number; readonly port?: number };

/**
 * Starts SIPp on `scenario` (a file name under test/peers/sipp/) with its words replaced, for one call. A port
 * found free can be taken before SIPp binds it (other test files run beside this one): then again, on new ports.
 */
export async function startSipp(
  scenario: string,
  transport: 'udp' | 'tcp',
  words: Readonly<Record<string, string>>,
  options: SippOptions = {},
): Promise<SippRun> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSippOnce(scenario, transport, words, options);
    } catch (err) {
      const taken = /Address already in use/.test(String(err));
      if (!taken || attempt === 3) throw err;
    }
  }
}

async function startSippOnce(
  scenario: string,
  transport: 'udp' | 'tcp',
  words: Readonly<Record<string, string>>,
  options: SippOptions,
): Promise<SippRun> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sipp-'));
  let xml = readFileSync(path.join(repoRoot, 'test', 'peers', 'sipp', scenario), 'utf8');
  // The _RE words stand in XML attributes: escaped for them.
  const attribute = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  for (const [word, value] of Object.entries(words)) xml = xml.split(`%${word}%`).join(word.endsWith('_RE') ? attribute(value) : value);
  const leftover = /%[A-Z_]+%/.exec(xml);
  if (leftover) throw new Error(`${scenario}: ${leftover[0]} is not filled in`);
  const file = path.join(dir, scenario);
  writeFileSync(file, xml);
  const port = options.port ?? (await freePort());
  // SIPp's media takes four ports from -mp on; its remote control one more, away from them.
  const mediaPort = await freePort();
  let controlPort = await freePort();
  while (controlPort >= mediaPort && controlPort <= mediaPort + 3) controlPort = await freePort();
  const files = { errors: path.join(dir, 'errors.log'), messages: path.join(dir, 'messages.log'), logs: path.join(dir, 'logs.log') };
  const child: ChildProcess = spawn(
    'sipp',
    [
      '-sf', file,
      '-i', sippAddress,
      '-p', String(port),
      '-mp', String(mediaPort),
      '-cp', String(controlPort),
      '-t', transport === 'udp' ? 'u1' : 't1',
      '-m', String(options.calls ?? 1),
      '-timeout', `${options.timeoutSeconds ?? 20}s`,
      '-timeout_error',
      '-nostdin',
      '-trace_err', '-error_file', files.errors,
      '-trace_msg', '-message_file', files.messages,
      '-trace_logs', '-log_file', files.logs,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const read = (f: string) => {
    try {
      return readFileSync(f, 'utf8');
    } catch {
      return '';
    }
  };
  try {
    await listening(port, transport, child);
  } catch (err) {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
    const why = `${String(err)}: ${stderr}${read(files.errors)}`;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(why);
  }
  return {
    port,
    exited,
    errors: () => `${stderr}${read(files.errors)}`,
    messages: () => read(files.messages),
    logs: () => read(files.logs),
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until SIPp holds its port (its UDP socket or TCP listener), at most 5 s. */
async function listening(port: number, transport: 'udp' | 'tcp', child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`sipp exited ${child.exitCode} at start`);
    if (await taken(port, transport)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('sipp did not start listening within 5 s');
}

/** Whether binding `port` on SIPp's address fails (SIPp holds it): no probe SIPp could take for a call. */
async function taken(port: number, transport: 'udp' | 'tcp'): Promise<boolean> {
  if (transport === 'tcp') {
    const server = net.createServer();
    const inUse = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(true));
      server.listen(port, sippAddress, () => resolve(false));
    });
    if (!inUse) await new Promise<void>((resolve) => server.close(() => resolve()));
    return inUse;
  }
  const udp = dgram.createSocket('udp4');
  const inUse = await new Promise<boolean>((resolve) => {
    udp.once('error', () => resolve(true));
    udp.bind(port, sippAddress, () => resolve(false));
  });
  closeQuietly(udp);
  return inUse;
}

/** A regular expression matching exactly `text` (for the %..._RE% words). */
export function exactly(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Closes a UDP socket whether or not its bind succeeded. */
function closeQuietly(socket: dgram.Socket): void {
  try {
    socket.close();
  } catch {
    // It never bound: nothing to close.
  }
}
