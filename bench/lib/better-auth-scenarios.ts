import pg from 'pg';
import { runLoad, warmUp, type LoadOptions, type LoadResult } from './load.js';
import { PhoneSequence } from './phones.js';
import type { ScenarioSettings } from './service-scenarios.js';

/**
 * better-auth's phone-number plugin under the same load as our create and verify.
 * - send: POST /api/auth/phone-number/send-otp with a new number each request (it inserts a verification
 *   row; its sendOTP callback does nothing).
 * - verify: POST /api/auth/phone-number/verify {phoneNumber, code, disableSession: true} with the right code,
 *   each request on a number that has a user and one pending code, seeded in SQL beforehand. It reads the
 *   code by identifier, consumes (deletes) it, reads the user by phone number and marks it verified; no
 *   session is created (ours creates none either).
 */
const seededCode = '123456';

/** The phone number of seeded better-auth user `i`. */
function seededPhone(i: number): string {
  return `+234805${String(i % 10_000_000).padStart(7, '0')}`;
}

/** Users [from, from + count) with one pending code each. */
export async function seedBetterAuth(url: string, from: number, count: number): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query(
      `INSERT INTO "user" (id, name, email, "emailVerified", "createdAt", "updatedAt", "phoneNumber", "phoneNumberVerified")
       SELECT 'bench-user-' || i, 'bench', 'bench-' || i || '@example.invalid', false, now(), now(),
         '+234805' || lpad((i % 10000000)::text, 7, '0'), false
       FROM generate_series($2::int, $2::int + $1::int - 1) AS i`,
      [count, from],
    );
    await db.query(
      `INSERT INTO verification (id, identifier, value, "expiresAt", "createdAt", "updatedAt")
       SELECT 'bench-code-' || i, '+234805' || lpad((i % 10000000)::text, 7, '0'), $2, now() + interval '1 hour', now(), now()
       FROM generate_series($3::int, $3::int + $1::int - 1) AS i`,
      [count, `${seededCode}:0`, from],
    );
    await db.query('ANALYZE');
  } finally {
    await db.end();
  }
}

async function measured(options: LoadOptions, s: ScenarioSettings): Promise<LoadResult> {
  if (s.warmUpSeconds > 0) await warmUp(options, s.warmUpSeconds);
  return runLoad(options);
}

export async function benchBetterAuthSend(url: string, phones: PhoneSequence, s: ScenarioSettings) {
  return measured(
    {
      url,
      connections: s.connections,
      seconds: s.seconds,
      method: 'POST',
      path: '/api/auth/phone-number/send-otp',
      headers: { 'content-type': 'application/json' },
      setup: (req) => ({ ...req, body: JSON.stringify({ phoneNumber: `+234${phones.take().slice(1)}` }) }),
    },
    s,
  );
}

export async function benchBetterAuthVerify(url: string, from: number, seeded: number, s: ScenarioSettings) {
  let next = 0;
  return measured(
    {
      url,
      connections: s.connections,
      seconds: s.seconds,
      method: 'POST',
      path: '/api/auth/phone-number/verify',
      headers: { 'content-type': 'application/json' },
      setup: (req) => ({
        ...req,
        body: JSON.stringify({ phoneNumber: seededPhone(from + (next++ % seeded)), code: seededCode, disableSession: true }),
      }),
    },
    s,
  );
}
