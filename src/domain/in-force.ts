import { readsInTurn } from './reads-in-turn.js';

/**
 * A table this process holds (number lists, routes, prices), read whole from its store and read again when a
 * change is announced (and now and then in case one was lost): the path of a code asks it without a query.
 */
export class InForce<Table, Row> {
  private table: Table;

  constructor(
    private readonly store: { all(): Promise<Row[]> },
    private readonly make: (rows: readonly Row[]) => Table,
  ) {
    this.table = make([]);
  }

  current(): Table {
    return this.table;
  }

  readonly refresh = readsInTurn(async () => {
    this.table = this.make(await this.store.all());
  });
}
