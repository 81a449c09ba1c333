import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { runAdminCommand, type AdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import type { Services } from '../../src/services.js';
import type { Harness } from './harness.js';

/** A /v1 verification record as the API returns it. */
export interface RecordBody {
  id: string;
  createdAt: string;
  updatedAt: string;
  expiresAt: string;
  otp: string;
  phoneNumber: string;
  country: string;
  countryCode: string;
  counter: number;
  pairedNumber: string;
  type: string;
  status: string;
  webhookUrl: string | null;
  reference: string | null;
  risk: { verdict: string; factors: { factor: string; rule: string; mode: string }[] };
}

export interface V1ErrorBody {
  status: false;
  message: string;
  error: { code: string; details?: { field: string; issue: string }[] };
  data?: RecordBody;
}

/** ISO 8601 UTC with milliseconds (contract 1). */
export const isoMillis = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const uuidV4ish = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Asserts the one /v1 error shape (contract 5) with this status and code, and returns the body. */
export function expectV1Error(res: LightMyRequestResponse, status: number, code: string): V1ErrorBody {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json() as V1ErrorBody;
  assertV1ErrorShape(body);
  assert.equal(body.error.code, code, res.body);
  assertNoLeak(res.body);
  return body;
}

export function assertV1ErrorShape(body: unknown): asserts body is V1ErrorBody {
  assert.ok(typeof body === 'object' && body !== null, 'error body is an object');
  const b = body as Record<string, unknown>;
  assert.equal(b.status, false);
  assert.equal(typeof b.message, 'string');
  assert.ok(typeof b.error === 'object' && b.error !== null, 'error.error is an object');
  assert.equal(typeof (b.error as Record<string, unknown>).code, 'string');
}

/** Asserts an RFC 6749 §5.2 error with this status and code. */
export function expectOAuthError(res: LightMyRequestResponse, status: number, error: string): void {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json() as Record<string, unknown>;
  assert.equal(body.error, error, res.body);
  assert.equal(typeof body.error_description, 'string');
  assertNoLeak(res.body);
}

/** No stack trace, no source path in a body. */
export function assertNoLeak(body: string): void {
  assert.doesNotMatch(body, /\n\s+at\s|\.ts:\d+|node_modules|"stack"/, `body leaks internals: ${body.slice(0, 300)}`);
}

/** The field names an error's details name. */
export function detailFields(body: V1ErrorBody): string[] {
  return (body.error.details ?? []).map((d) => d.field).sort();
}

let phoneSeq = 0;
/** A fresh valid Nigerian mobile number in local format (with the 0 trunk prefix). */
export function nextLocalNumber(): string {
  phoneSeq += 1;
  return `0803${String((phoneSeq * 7919 + process.pid) % 10_000_000).padStart(7, '0')}`;
}

/** E.164 of a number from `nextLocalNumber`. */
export function e164Of(local: string): string {
  return `+234${local.slice(1)}`;
}

/** Creates a verification and returns its record; fails the test unless it is a 200. */
export async function createVerification(
  h: Harness,
  token: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<RecordBody> {
  const res = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber(), ...body }, headers);
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { data: RecordBody }).data;
}

/** Kinds of the events recorded for a verification, oldest first. */
export async function eventKinds(h: Harness, verificationId: string): Promise<string[]> {
  const rows = await h.services.db.db
    .selectFrom('events')
    .select('kind')
    .where('verification_id', '=', verificationId)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => r.kind);
}

/** Rows in `messages` and `send_jobs` (what was or will be sent). */
export async function sendCounts(h: Harness): Promise<{ messages: number; jobs: number }> {
  // Codes go out right after the commit: count once the sends started so far have ended.
  await h.services.sendWorker.idle();
  const db = h.services.db.db;
  const [m, j] = await Promise.all([
    db.selectFrom('messages').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    db.selectFrom('send_jobs').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { messages: Number(m.n), jobs: Number(j.n) };
}

let addressSeq = 0;
/** A remote address no other test used, so that failed-authentication counting stays per test. */
export function freshAddress(): string {
  addressSeq += 1;
  return `10.${(addressSeq >> 16) & 255}.${(addressSeq >> 8) & 255}.${addressSeq & 255}`;
}

/**
 * Polls `check` until it returns true or `ms` pass. The bound only ends a wait that would never succeed: 5 s was
 * too short for an SMSC's receipt on a busy CI machine (six test processes on two cores).
 */
export async function eventually(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A /v1 number lookup as the API returns it (contract 11). */
export interface LookupBody {
  id: string;
  status: string;
  phoneNumber: string;
  countryCode: string;
  regionCode: string | null;
  valid: boolean;
  lineType: string;
  carrier: string | null;
  timeZones: string[];
  createdAt: string;
}

/** Looks a number up (a Nigerian mobile unless the body says otherwise); fails the test unless it is a 200. */
export async function createLookup(h: Harness, token: string, body: Record<string, unknown> = {}): Promise<LookupBody> {
  const res = await h.call('POST', '/v1/lookup/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber(), ...body });
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { data: LookupBody }).data;
}

/** Fails the test instead of holding it up when `promise` never settles (what a lost database thread must not cause). */
export function settlesWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} hung`)), ms);
  });
  return Promise.race([promise, hung]).finally(() => clearTimeout(timer));
}

/** Conversion counts what reached a provider: waits until verification `id`'s send is recorded. */
export async function sentBy(h: Harness, token: string, id: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    const res = await h.call('GET', `/v1/otp/${id}`, token);
    if ((res.json() as { data: { delivery: { provider: string | null } } }).data.delivery.provider !== null) return;
    await sleep(10);
  }
  assert.fail(`verification ${id} was never sent`);
}

/** Runs an operator command (as the CLI and the console do) on these services and gives what it answered; a refusal fails the test. */
export async function operatorCommand(services: Services, command: AdminCommand): Promise<unknown> {
  const ran = await runAdminCommand(adminDeps(services), command);
  assert.ok(ran.ok, JSON.stringify(ran));
  return ran.value;
}
