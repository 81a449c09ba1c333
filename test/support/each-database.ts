import { describe } from 'node:test';
import { dbKinds, postgresSkip, type DbKind } from './databases.js';

/** Declares the suite once per database kind; the PostgreSQL one is skipped, saying why, without a server. */
export function forEachDatabase(name: string, suite: (kind: DbKind) => void): void {
  for (const kind of dbKinds) {
    describe(`${name} [${kind}]`, { skip: kind === 'postgres' ? postgresSkip : false }, () => suite(kind));
  }
}
