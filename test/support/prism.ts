import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
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

/**
 * Prism serving Twilio's description with one addition Prism needs and OpenAPI already implies: an `encoding` of
 * style `form`, explode true, for each array property of a form body (StatusCallbackEvent). That is the default
 * serialization of a form body's arrays, a repeated field, which Twilio's own SDK sends; Prism 5 reads a form field
 * as an array only when the description spells its encoding out, and otherwise refuses every value with "must be
 * array" (stoplightio/prism#2473). Prism also keeps only the last of repeated fields, so the number of values
 * sent is checked against a local server, not here.
 */
export async function startTwilioPrism(): Promise<PrismMock> {
  const description: unknown = JSON.parse(fs.readFileSync(twilioApiV2010Spec, 'utf8'));
  return startPrismOn('twilio_api_v2010.json', JSON.stringify(withFormArrayEncodings(description)));
}

/**
 * Prism serving a description as the tests changed it (an overlay, an encoding Prism needs), written to a folder
 * of its own that goes when Prism stops, or when it fails to start.
 */
export async function startPrismOn(fileName: string, description: string): Promise<PrismMock> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-oai-'));
  const spec = path.join(dir, fileName);
  fs.writeFileSync(spec, description);
  try {
    const prism = await startPrism(spec);
    return {
      ...prism,
      stop: async () => {
        await prism.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The description with `encoding: { <array property>: { style: 'form', explode: true } }` on every form body. */
function withFormArrayEncodings(description: unknown): unknown {
  if (!isJson(description) || !isJson(description.paths)) throw new Error('not an OpenAPI description');
  for (const item of Object.values(description.paths)) {
    if (!isJson(item)) continue;
    for (const operation of Object.values(item)) {
      const body = isJson(operation) && isJson(operation.requestBody) ? operation.requestBody : null;
      const content = body && isJson(body.content) ? body.content['application/x-www-form-urlencoded'] : null;
      if (!isJson(content) || !isJson(content.schema) || !isJson(content.schema.properties)) continue;
      const encoding: Json = isJson(content.encoding) ? { ...content.encoding } : {};
      for (const [name, schema] of Object.entries(content.schema.properties)) {
        if (isJson(schema) && schema.type === 'array' && encoding[name] === undefined) encoding[name] = { style: 'form', explode: true };
      }
      content.encoding = encoding;
    }
  }
  return description;
}

/** Twilio's own OpenAPI description of Verify v2 (Verifications, VerificationCheck...), as Twilio publishes it. */
export const twilioVerifyV2SpecJson = path.join(repoRoot, 'node_modules/@twilio-alpha/mcp/twilio-oai/spec/json/twilio_verify_v2.json');

/** Prism serving Twilio's Verify v2 description, with the same form-array encodings as the 2010 API's. */
export async function startTwilioVerifyPrism(): Promise<PrismMock> {
  const description: unknown = JSON.parse(fs.readFileSync(twilioVerifyV2SpecJson, 'utf8'));
  return startPrismOn('twilio_verify_v2.json', JSON.stringify(withFormArrayEncodings(description)));
}
