import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './processes.js';

/** Twilio's own OpenAPI description of the 2010 REST API (Messages, Calls...), as Twilio publishes it. */
export const twilioApiV2010Spec = path.join(repoRoot, 'node_modules/@twilio-alpha/mcp/twilio-oai/spec/json/twilio_api_v2010.json');

const prismCli = path.join(repoRoot, 'node_modules/@stoplight/prism-cli/dist/index.js');
const exitWithParent = path.join(repoRoot, 'test/support/exit-with-parent.cjs');
/** Prism logs every request; the most of its output kept, for failure messages. */
const maxOutput = 64 * 1024;

/** A Prism mock server answering as the OpenAPI description says, and refusing requests it does not allow. */
export interface PrismMock {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** What Prism printed lately. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `prism mock <spec>` on a free port of 127.0.0.1 and waits until it answers. `--errors` makes a request
 * the description does not allow an error answer (4xx) instead of a warning. Prism ends with the test process.
 */
export async function startPrism(spec: string, timeoutMs = 60_000): Promise<PrismMock> {
  const child = spawn(
    process.execPath,
    ['--require', exitWithParent, prismCli, 'mock', spec, '--host', '127.0.0.1', '--port', '0', '--errors'],
    { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-maxOutput);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async () => {
    child.stdin.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`prism exited: ${out}`);
      const url = /Prism is listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (url !== undefined && (await answers(url))) return { url, output: () => out, stop };
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`prism did not start in ${timeoutMs} ms: ${out}`);
  } catch (err) {
    await stop();
    throw err;
  }
}

/** True once the server answers HTTP at all (Prism answers 404 to a path the description lacks). */
async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/`, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}
