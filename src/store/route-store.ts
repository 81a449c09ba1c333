import { sql, type Kysely } from 'kysely';
import { channels, type Channel } from '../domain/channel-driver.js';
import type { Route, RouteStore } from '../domain/routes.js';
import type { Database } from './schema.js';

/** The channel route changes are announced on (PostgreSQL), so that every instance reads the routes again. */
export const routesChannel = 'otp_routes';

/** Routes (contract 17) in the database; each change is announced by the transaction making it. */
export class SqlRouteStore implements RouteStore {
  constructor(
    private readonly db: Kysely<Database>,
    /** PostgreSQL: NOTIFY other processes in the changing transaction. */
    private readonly announce: boolean,
  ) {}

  set(route: Route): Promise<boolean> {
    const changed = {
      providers: [...route.providers],
      weights: route.weights ? [...route.weights] : null,
      failover_after_seconds: route.failoverAfterSeconds,
      policy: route.policy,
      updated_at: route.updatedAt,
    };
    return this.db.transaction().execute(async (trx) => {
      const existed = await trx
        .selectFrom('routes')
        .select('channel')
        .where('channel', '=', route.channel)
        .where('destination', '=', route.destination)
        .forUpdate()
        .executeTakeFirst();
      await trx
        .insertInto('routes')
        .values({ ...changed, channel: route.channel, destination: route.destination })
        .onConflict((oc) => oc.columns(['channel', 'destination']).doUpdateSet(changed))
        .execute();
      await this.announced(trx);
      return existed === undefined;
    });
  }

  remove(channel: Channel, destination: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const removed = await trx.deleteFrom('routes').where('channel', '=', channel).where('destination', '=', destination).executeTakeFirst();
      const any = Number(removed.numDeletedRows) > 0;
      if (any) await this.announced(trx);
      return any;
    });
  }

  async all(): Promise<Route[]> {
    const rows = await this.db.selectFrom('routes').selectAll().orderBy('channel').orderBy('destination').execute();
    return rows
      .filter((r) => (channels as readonly string[]).includes(r.channel))
      .map((r) => ({
        channel: r.channel as Channel,
        destination: r.destination,
        providers: r.providers,
        weights: r.weights,
        failoverAfterSeconds: r.failover_after_seconds,
        policy: r.policy === 'best' ? 'best' : 'ordered',
        updatedAt: new Date(r.updated_at),
      }));
  }

  private async announced(trx: Kysely<Database>): Promise<void> {
    if (this.announce) await sql`SELECT pg_notify(${routesChannel}, '')`.execute(trx);
  }
}
