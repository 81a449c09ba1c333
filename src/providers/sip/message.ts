/**
 * SIP messages as the provider reads and writes them (RFC 3261 section 7): a request is written from its parts,
 * a message from the trunk is parsed into a start line, headers by lower-case full name, and a body. Only what a
 * dropping UAC needs is read; anything unparsable is null, never an exception.
 */

/** Header names by their compact forms (RFC 3261 section 7.3.3). */
const compactNames: Readonly<Record<string, string>> = {
  v: 'via',
  f: 'from',
  t: 'to',
  i: 'call-id',
  m: 'contact',
  l: 'content-length',
  c: 'content-type',
  k: 'supported',
  s: 'subject',
  e: 'content-encoding',
};

/** Headers by lower-case full name, each with its values in order of appearance (one per header line). */
export type SipHeaders = ReadonlyMap<string, readonly string[]>;

export interface SipResponse {
  readonly kind: 'response';
  readonly status: number;
  readonly reason: string;
  readonly headers: SipHeaders;
  readonly body: string;
}

export interface SipRequest {
  readonly kind: 'request';
  readonly method: string;
  readonly uri: string;
  readonly headers: SipHeaders;
  readonly body: string;
}

export type SipMessage = SipResponse | SipRequest;

/** The most of one message read: a trunk's answers are small; anything larger is not one of them. */
export const maxMessageBytes = 64 * 1024;

/** Parses one whole message (a datagram, or one framed off a stream); null when it is not a SIP message. */
export function parseMessage(data: Buffer): SipMessage | null {
  if (data.length > maxMessageBytes) return null;
  const text = data.toString('utf8');
  const end = headEnd(text);
  if (end === null) return null;
  const lines = unfold(text.slice(0, end.index).split(/\r?\n/));
  const start = lines.shift();
  if (start === undefined) return null;
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return null;
    const raw = line.slice(0, colon).trim().toLowerCase();
    const name = compactNames[raw] ?? raw;
    const value = line.slice(colon + 1).trim();
    const list = headers.get(name);
    if (list) list.push(value);
    else headers.set(name, [value]);
  }
  const declared = Number(headers.get('content-length')?.[0] ?? 'NaN');
  const rest = data.subarray(Buffer.byteLength(text.slice(0, end.index + end.length)));
  const body = (Number.isInteger(declared) && declared >= 0 ? rest.subarray(0, declared) : rest).toString('utf8');
  const status = /^SIP\/2\.0 ([1-6]\d\d) ?(.*)$/.exec(start);
  if (status?.[1]) return { kind: 'response', status: Number(status[1]), reason: status[2] ?? '', headers, body };
  const request = /^([A-Z]+) (\S+) SIP\/2\.0$/.exec(start);
  if (request?.[1] && request[2]) return { kind: 'request', method: request[1], uri: request[2], headers, body };
  return null;
}

/** Where the head ends: the index of the empty line and its length; null when the text has none. */
export function headEnd(text: string): { readonly index: number; readonly length: number } | null {
  const crlf = text.indexOf('\r\n\r\n');
  const lf = text.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { index: crlf, length: 4 };
  if (lf >= 0) return { index: lf, length: 2 };
  return null;
}

/** Joins folded header lines (a line starting with a space or tab continues the one before). */
function unfold(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    const last = out.length - 1;
    if (/^[ \t]/.test(line) && last >= 0) out[last] = `${out[last] ?? ''} ${line.trim()}`;
    else if (line !== '') out.push(line);
  }
  return out;
}

/** Every value of a header, comma-separated lists split (outside quotes and angle brackets). */
export function headerValues(message: SipMessage, name: string): string[] {
  return (message.headers.get(name) ?? []).flatMap(splitList);
}

/** The first value of a header, or null. */
export function firstHeader(message: SipMessage, name: string): string | null {
  return headerValues(message, name)[0] ?? null;
}

/** Splits `a, "b,c", <d,e>` at its top-level commas. */
export function splitList(value: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  let angled = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value.charAt(i);
    if (quoted && ch === '\\') {
      current += ch + value.charAt(i + 1);
      i++;
      continue;
    }
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '<') angled = true;
    else if (!quoted && ch === '>') angled = false;
    if (ch === ',' && !quoted && !angled) {
      if (current.trim()) parts.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

/** A `;name=value` parameter of a header value (after its URI, outside angle brackets); null when absent. */
export function headerParam(value: string, name: string): string | null {
  const afterUri = value.includes('>') ? value.slice(value.lastIndexOf('>') + 1) : value.slice(value.indexOf(';'));
  for (const part of afterUri.split(';').slice(1)) {
    const [key = '', ...rest] = part.split('=');
    if (key.trim().toLowerCase() === name) return rest.join('=').trim();
  }
  return null;
}

/** The URI inside `<...>` of a name-addr, or the value up to its parameters. */
export function addressUri(value: string): string {
  const angled = /<([^>]*)>/.exec(value);
  if (angled?.[1] !== undefined) return angled[1];
  return value.split(';')[0]?.trim() ?? value;
}

/** The CSeq number and method of a message; null when missing or malformed. */
export function cseqOf(message: SipMessage): { readonly seq: number; readonly method: string } | null {
  const m = /^(\d+)\s+([A-Z]+)$/.exec(firstHeader(message, 'cseq') ?? '');
  return m?.[1] && m[2] ? { seq: Number(m[1]), method: m[2] } : null;
}

/** The branch of the topmost Via; null when missing. */
export function topBranch(message: SipMessage): string | null {
  const via = firstHeader(message, 'via');
  return via === null ? null : headerParam(via, 'branch');
}

/** One request to write: its start line parts, headers in order (name as written), and body. */
export interface OutgoingRequest {
  readonly method: string;
  readonly uri: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: { readonly type: string; readonly text: string };
}

/** Writes a request, with its Content-Length (and Content-Type when it has a body). */
export function writeRequest(request: OutgoingRequest): Buffer {
  const body = request.body?.text ?? '';
  const lines = [`${request.method} ${request.uri} SIP/2.0`, ...request.headers.map(([name, value]) => `${name}: ${value}`)];
  if (request.body) lines.push(`Content-Type: ${request.body.type}`);
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`, 'utf8');
}

/** Writes a response to a request the trunk sent us (an OPTIONS ping, a BYE), echoing what RFC 3261 8.2.6.2 asks. */
export function writeResponse(request: SipRequest, status: number, reason: string): Buffer {
  const lines = [`SIP/2.0 ${status} ${reason}`];
  for (const name of ['via', 'from', 'to', 'call-id', 'cseq']) {
    for (const value of request.headers.get(name) ?? []) lines.push(`${writtenName(name)}: ${value}`);
  }
  lines.push('Content-Length: 0');
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8');
}

function writtenName(name: string): string {
  return name === 'call-id' ? 'Call-ID' : name === 'cseq' ? 'CSeq' : name.replace(/(^|-)([a-z])/g, (_m, dash: string, ch: string) => dash + ch.toUpperCase());
}
