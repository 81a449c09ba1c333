import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startServer } from '../../src/server.js';

/** What a server started with `env` (on an in-memory embedded database) logged at warn and above, until it closed. */
export async function startLog(env: Record<string, string>): Promise<string> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const config = loadConfig({ DATA_DIR: 'memory://', PORT: '0', HOST: '127.0.0.1', WEBHOOK_WORKER: 'false', ...env });
  const server = await startServer(config, { logger: createLogger('warn', sink), print: () => undefined });
  await server.close();
  return lines.join('');
}
