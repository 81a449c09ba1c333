/**
 * The delivery-failover section (contract 17): how late a delivery-confirmed failover goes out when many codes
 * wait for theirs. The service (SMS_PROVIDER=http,log, the gateway in this process) has the route `sms NG http,log
 * --failover-after N`; it takes `count` creates paced at `rate` per second; the gateway takes each code and never
 * reports it delivered, so each one goes once more through `log` N s after the gateway took it, while the others
 * keep waiting (with the defaults: 10,000 creates over 20 s and a 30 s wait, all of them are waiting when the first
 * falls due). A failover's lateness is read from the record: its second send's time less (its first send's + N),
 * both as the service recorded them.
 */
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { onCleanup } from './cleanup.js';
import { createdIds, recordLateness, serviceBehindGateway, type FallbackBenchSettings, type FallbackResults } from './fallback-scenario.js';
import { PhoneSequence } from './phones.js';
import { paced } from './provider-scenarios.js';

/** As the fallback section's: `maxWaiting` is codes waiting for their failover, `duplicates` codes sent through `log` twice. */
export type DeliveryFailoverResults = FallbackResults;

export async function benchDeliveryFailover(o: {
  readonly settings: FallbackBenchSettings;
  readonly serviceEnv: () => NodeJS.ProcessEnv;
  readonly databaseUrl: string;
  readonly log: (text: string) => void;
  readonly out: DeliveryFailoverResults;
}): Promise<void> {
  const { settings: s, log, out } = o;
  const { gateway, service } = await serviceBehindGateway(o.serviceEnv(), s, { SMS_PROVIDER: 'http,log' });
  const db = new pg.Pool({ connectionString: o.databaseUrl, max: 2 });
  onCleanup(() => db.end());
  // As `routes set sms NG http,log --failover-after N` writes it, announced to the service.
  await db.query(
    `INSERT INTO routes (channel, destination, providers, weights, failover_after_seconds, policy, updated_at)
     VALUES ('sms', 'NG', ARRAY['http', 'log'], NULL, $1, 'ordered', now())`,
    [s.afterSeconds],
  );
  await db.query(`SELECT pg_notify('otp_routes', '')`);
  await sleep(1000);
  const phones = new PhoneSequence(90_000_000);
  const headers = { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' };
  const sent = await paced(service.url, s.connections, s.count, s.rate, () => ({
    key: '',
    path: '/v1/otp/request',
    headers,
    body: JSON.stringify({ countryCode: '+234', phoneNumber: phones.take() }),
  }));
  const ids = createdIds(sent);
  out.created = ids.length;
  log(`delivery failover: ${ids.length} of ${sent.length} created; waiting for their failovers`);
  // Until every code has its second send (or nothing moved for a while), sampling how many wait at once.
  const deadline = Date.now() + (s.afterSeconds + Math.ceil(s.count / s.rate) + 120) * 1000;
  let done = 0;
  let last = { done: -1, at: Date.now() };
  while (Date.now() < deadline) {
    const { rows } = await db.query<{ waiting: number; done: number }>(
      `SELECT count(*) FILTER (WHERE failover_at IS NOT NULL)::int AS waiting, count(*) FILTER (WHERE jsonb_array_length(deliveries) >= 2)::int AS done
       FROM verifications WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    out.maxWaiting = Math.max(out.maxWaiting, rows[0]?.waiting ?? 0);
    done = rows[0]?.done ?? 0;
    if (done >= ids.length) break;
    if (done !== last.done) last = { done, at: Date.now() };
    else if (done > 0 && Date.now() - last.at > 10_000) break;
    await sleep(500);
  }
  // A second copy would come within a few rounds of the failover task.
  await sleep(2_000);
  const { rows } = await db.query<{ first: Date; second: Date; logs: number }>(
    `SELECT (deliveries->0->>'at')::timestamptz AS first, (deliveries->1->>'at')::timestamptz AS second,
       (SELECT count(*) FROM jsonb_array_elements(deliveries) d WHERE d->>'provider' = 'log')::int AS logs
     FROM verifications WHERE id = ANY($1::uuid[]) AND deliveries->0->>'provider' = 'http' AND deliveries->1->>'provider' = 'log'`,
    [ids],
  );
  out.duplicates = rows.filter((r) => r.logs > 1).length;
  recordLateness(out, rows.map((r) => Math.max(0, r.second.getTime() - (r.first.getTime() + s.afterSeconds * 1000))));
  log(`delivery failover: ${JSON.stringify(out)}`);
  await service.child.stop();
  await gateway.close();
}
