import type { Insertable, Kysely, Selectable } from 'kysely';
import { isLineType } from '../domain/line-type.js';
import type { Lookup } from '../domain/lookup.js';
import type { LookupStore } from '../domain/lookup-store.js';
import type { Database, LookupsTable } from './schema.js';
import { isUuid } from './uuid.js';

/** Lookups in PostgreSQL or PGlite. */
export class SqlLookupStore implements LookupStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(lookup: Lookup): Promise<void> {
    await this.db.insertInto('lookups').values(lookupRow(lookup)).execute();
  }

  async find(clientId: string, id: string): Promise<Lookup | null> {
    if (!isUuid(id)) return null;
    const row = await this.db.selectFrom('lookups').selectAll().where('id', '=', id).where('client_id', '=', clientId).executeTakeFirst();
    return row ? toLookup(row) : null;
  }
}

function lookupRow(l: Lookup): Insertable<LookupsTable> {
  return {
    id: l.id,
    client_id: l.clientId,
    phone_number: l.phoneNumber,
    country_code: l.countryCode,
    region_code: l.regionCode,
    valid: l.valid,
    line_type: l.lineType,
    carrier: l.carrier,
    time_zones: [...l.timeZones],
    created_at: l.createdAt,
  };
}

function toLookup(row: Selectable<LookupsTable>): Lookup {
  return {
    id: row.id,
    clientId: row.client_id,
    createdAt: row.created_at,
    phoneNumber: row.phone_number,
    countryCode: row.country_code,
    regionCode: row.region_code,
    valid: row.valid,
    // A type a later metadata no longer names reads as UNKNOWN rather than failing the read.
    lineType: isLineType(row.line_type) ? row.line_type : 'UNKNOWN',
    carrier: row.carrier,
    timeZones: row.time_zones,
  };
}
