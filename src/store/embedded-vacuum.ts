import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * What autovacuum does on PostgreSQL, for the embedded database, which runs PostgreSQL in single-user mode where
 * autovacuum never runs: reclaims dead rows and refreshes the planner's statistics. It takes the single session
 * for its turn like any holder (a few hundred ms for 150,000 verifications, less once pages are all-visible).
 */
export async function vacuumEmbedded(db: Kysely<Database>): Promise<void> {
  await sql`VACUUM (ANALYZE)`.execute(db);
}
