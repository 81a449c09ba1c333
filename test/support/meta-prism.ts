import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parse } from 'yaml';
import { startPrismOn, type PrismMock } from './prism.js';
import { repoRoot } from './processes.js';

/**
 * Meta's own OpenAPI description of the WhatsApp Business Platform (Cloud API), v23.0, as published in
 * github.com/facebook/openapi (MIT; the licence is beside it in test/peers/meta/LICENSE).
 */
export const metaCloudApiSpec = path.join(repoRoot, 'test/peers/meta/business-messaging-api_v23.0.yaml');

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** components.schemas[name], which the overlay edits in place. */
function schema(description: Json, name: string): Json {
  const schemas = isJson(description.components) && isJson(description.components.schemas) ? description.components.schemas : null;
  const found = schemas?.[name];
  if (!isJson(found)) throw new Error(`Meta's description has no schema ${name}: the overlay no longer fits it`);
  return found;
}

function withoutRequired(s: Json, property: string, where: string): void {
  const required = s.required;
  if (!Array.isArray(required) || !required.includes(property)) throw new Error(`${where} no longer requires ${property}: drop that part of the overlay`);
  s.required = required.filter((r) => r !== property);
}

/**
 * The overlay: Meta's description as published, with three of its rules relaxed because they refuse requests
 * that Meta's own documentation sends and its API accepts, and nothing else changed.
 */
export function metaOverlay(description: unknown): Json {
  if (!isJson(description)) throw new Error('not an OpenAPI description');
  // 1. A button component's `index` is "the position index of the button (0-9)", as its own description says and
  //    as every template example sends ("0" for an authentication template's copy-code button); the published
  //    pattern `^[2-6, 11-14]$` is a character class that refuses "0" and "1". Both places it appears get 0-9.
  const templateComponent = schema(description, 'TemplateComponent');
  const buttonComponent = schema(description, 'ButtonComponent');
  const buttonIndex = Array.isArray(buttonComponent.allOf) ? buttonComponent.allOf.find((part) => isJson(part) && isJson(part.properties) && isJson(part.properties.index)) : null;
  for (const index of [isJson(templateComponent.properties) ? templateComponent.properties.index : null, isJson(buttonIndex) && isJson(buttonIndex.properties) ? buttonIndex.properties.index : null]) {
    if (!isJson(index) || index.pattern !== '^[2-6, 11-14]$') throw new Error('the button index pattern changed: review the overlay');
    index.pattern = '^[0-9]$';
  }
  // 2. `template.language.policy` is marked required, but Meta's documentation sends only `code` (`deterministic`,
  //    the one value, is what the API assumes), and so do its own examples.
  withoutRequired(schema(description, 'LanguageObject'), 'policy', 'LanguageObject');
  // 3. `recipient_type` is marked required on every message, but it is optional ("individual" when absent) and
  //    Meta's documented text and template messages leave it out.
  withoutRequired(schema(description, 'BaseMessageProperties'), 'recipient_type', 'BaseMessageProperties');
  return description;
}

/** Prism serving Meta's description with the overlay, refusing every request it does not allow. */
export async function startMetaPrism(): Promise<PrismMock> {
  const description = metaOverlay(parse(fs.readFileSync(metaCloudApiSpec, 'utf8'), { maxAliasCount: -1 }));
  return startPrismOn('business-messaging-api_v23.0.json', JSON.stringify(description));
}

/** An answer a test scripts for one destination instead of Prism's: Meta's error shape with its code. */
export interface MetaScriptedAnswer {
  readonly status: number;
  readonly code: number;
}

/** Meta's Cloud API as the tests reach it: Prism validating every request, with answers the tests may script. */
export interface MetaPeer {
  /** http://127.0.0.1:<port> (META_BASE_URL). */
  readonly url: string;
  /** Every request as sent, with Prism's verdict (its status: 422 for a request the description refuses). */
  readonly requests: { readonly path: string; readonly headers: Readonly<Record<string, string | string[] | undefined>>; readonly body: string; readonly prismStatus: number }[];
  /** Answers for the next sends to a number (E.164 digits, as Meta's `to`), oldest first; then Prism's own. */
  script(to: string, answers: readonly MetaScriptedAnswer[]): void;
  /** Called with a message's wamid before its send is answered (a status webhook that overtakes the answer). */
  beforeAnswer: ((to: string, wamid: string) => Promise<void>) | null;
  output(): string;
  stop(): Promise<void>;
}

let wamidSeq = 0;

/**
 * Prism behind a small front that passes every request on to it, so that each is validated against Meta's
 * description, and changes two things in what comes back: Prism's static mock answers the description's one
 * example wamid to every message, which would make every send the same message, so a 200's `messages[0].id` is
 * made unique; and a scripted error (Meta's `{ error: { message, type, code, fbtrace_id } }`, which the
 * description does not list for this operation) replaces Prism's 200 for the numbers a test names.
 */
export async function startMetaPeer(): Promise<MetaPeer> {
  const prism = await startMetaPrism();
  const scripts = new Map<string, MetaScriptedAnswer[]>();
  const requests: MetaPeer['requests'][number][] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        // fetch sets the length of the body it sends (undici 7, once loaded in the process, refuses one given).
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) if (!['host', 'connection', 'content-length'].includes(name) && typeof value === 'string') headers[name] = value;
        const answer = await fetch(`${prism.url}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(req.method === 'POST' && { body }) });
        let text = await answer.text();
        requests.push({ path: req.url ?? '/', headers: req.headers, body, prismStatus: answer.status });
        let status = answer.status;
        if (status === 200 && req.url?.endsWith('/messages')) {
          const to = (JSON.parse(body) as { to?: string }).to ?? '';
          const scripted = scripts.get(to)?.shift();
          const json = JSON.parse(text) as { messages?: { id: string }[] };
          if (scripted) {
            status = scripted.status;
            text = JSON.stringify({ error: { message: `(#${scripted.code}) scripted`, type: 'OAuthException', code: scripted.code, fbtrace_id: 'AbCdEf' } });
          } else if (json.messages?.[0]) {
            wamidSeq += 1;
            json.messages[0].id = `wamid.HBgL${process.pid}${String(wamidSeq).padStart(6, '0')}AA`;
            text = JSON.stringify(json);
            await peer.beforeAnswer?.(to, json.messages[0].id);
          }
        }
        res.writeHead(status, { 'content-type': 'application/json' }).end(text);
      })().catch((err: unknown) => res.writeHead(502).end(String(err)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const peer: MetaPeer = {
    beforeAnswer: null,
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (to, answers) => scripts.set(to, [...answers]),
    output: () => prism.output(),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await prism.stop();
    },
  };
  return peer;
}
