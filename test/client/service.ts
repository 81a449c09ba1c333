import assert from 'node:assert/strict';
import { OtpClient, type OtpClientOptions, type VerificationRecord } from '../../client/src/index.js';
import type { Scope } from '../../src/domain/scopes.js';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import { TestClock } from '../support/clock.js';
import type { DbKind } from '../support/databases.js';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * A clock that runs at the real pace from the real time, moved forward by hand: the service's cool-downs
 * and webhook timestamps need the real time, token expiry tests need a jump.
 */
export class ShiftedClock extends TestClock {
  private offset = 0;
  override now(): Date {
    return new Date(Date.now() + this.offset);
  }
  override advance(ms: number): void {
    this.offset += ms;
  }
}

/** The service listening on 127.0.0.1, on a fresh database, for the typed client to call over HTTP. */
export interface ClientTestService {
  readonly h: Harness;
  readonly url: string;
  readonly clock: ShiftedClock;
  /** Registers a client (otp:send and otp:verify by default). */
  register(scopes?: readonly Scope[]): Promise<ClientCredentials>;
  /** A typed client of this service for these credentials. */
  client(credentials: ClientCredentials, options?: Partial<OtpClientOptions>): OtpClient;
  /** Token requests the service has answered at POST /oauth2/token, read from its GET /metrics. */
  tokenRequests(): Promise<number>;
  close(): Promise<void>;
}

export async function startClientTestService(kind: DbKind, env: Record<string, string> = {}): Promise<ClientTestService> {
  const clock = new ShiftedClock();
  const h = await createHarness(kind, {
    clock,
    env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '2000', PHONE_LIMIT_COUNT: '100000', ...env },
  });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const address = h.app.server.address();
  assert.ok(address && typeof address === 'object');
  const url = `http://127.0.0.1:${address.port}`;
  return {
    h,
    url,
    clock,
    register: (scopes = ['otp:send', 'otp:verify']) => h.client(scopes),
    client: (credentials, options = {}) =>
      new OtpClient({ baseUrl: url, clientId: credentials.clientId, clientSecret: credentials.clientSecret, ...options }),
    async tokenRequests() {
      const res = await fetch(`${url}/metrics`);
      assert.equal(res.status, 200);
      let total = 0;
      for (const line of (await res.text()).split('\n')) {
        const match = /^otp_http_requests_total\{([^}]*)\} (\d+)$/.exec(line);
        if (match?.[1]?.includes('route="/oauth2/token"')) total += Number(match[2]);
      }
      return total;
    },
    close: () => h.close(),
  };
}

let phoneSeq = 0;
/** A fresh valid Nigerian mobile number in local format, none used by another test of this process. */
export function freshNumber(): string {
  phoneSeq += 1;
  return `0805${String((phoneSeq * 7919 + process.pid * 13) % 10_000_000).padStart(7, '0')}`;
}

/** Runs `fn`, which must reject, and returns what it rejected with. */
export async function rejection(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

/** The code of a verification whose client shows codes (the default). */
export function codeOf(record: VerificationRecord): string {
  assert.ok(record.otp !== null, 'the code is shown');
  return record.otp;
}
