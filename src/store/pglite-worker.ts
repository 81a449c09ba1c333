/**
 * The worker thread that owns the embedded database (started by pglite-thread.ts): it opens PGlite as the main
 * thread used to, same data folder and same durability (PGlite's own fsync at each commit), and answers the
 * main thread's requests, so that PGlite's WebAssembly work runs beside the event loop rather than on it.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { errorFields, type Reply, type Request, type Started, type WorkerStart } from './pglite-protocol.js';

if (!parentPort) throw new Error('pglite-worker.ts runs as a worker thread only');
const port: MessagePort = parentPort;
const start = workerData as WorkerStart;

const shared = {
  pgliteWasmModule: start.pgliteWasmModule,
  initdbWasmModule: start.initdbWasmModule,
  fsBundle: start.fsBundle,
};

let pglite: PGlite;
try {
  pglite = await PGlite.create(
    start.dataDir === null
      ? { ...shared, ...(start.loadDataDir && { loadDataDir: start.loadDataDir }) }
      : { ...shared, dataDir: start.dataDir },
  );
} catch (err) {
  port.postMessage({ started: false, error: errorFields(err) } satisfies Started);
  port.close();
  throw err;
}
port.postMessage({ started: true } satisfies Started);

port.on('message', (request: Request) => {
  answer(request).then(
    ([reply, transfer]) => port.postMessage(reply, transfer),
    (err: unknown) => port.postMessage({ id: request.id, ok: false, error: errorFields(err) } satisfies Reply),
  );
});

async function answer(request: Request): Promise<[Reply, ArrayBuffer[]]> {
  switch (request.op) {
    case 'query': {
      let last: { rows: unknown[]; affectedRows?: number } = { rows: [] };
      for (const { sql, params } of request.statements) last = await pglite.query(sql, [...params]);
      return [{ id: request.id, ok: true, result: { rows: last.rows, affectedRows: last.affectedRows } }, []];
    }
    case 'dump': {
      const dump = await (await pglite.dumpDataDir('none')).arrayBuffer();
      return [{ id: request.id, ok: true, dump }, [dump]];
    }
    case 'close':
      await pglite.close();
      // Nothing is left to answer: the port's close lets the thread end once this reply is sent.
      setImmediate(() => port.close());
      return [{ id: request.id, ok: true, closed: true }, []];
  }
}
