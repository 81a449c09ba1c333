/**
 * The ceiling: a bare Fastify route returning a constant JSON body, no logger, no database. Whatever the
 * service does per request costs throughput relative to this.
 */
import Fastify from 'fastify';

async function main(): Promise<void> {
  const app = Fastify({ logger: false });
  const body = { status: true, message: 'ok', data: { id: '00000000-0000-4000-8000-000000000000' } };
  app.get('/ping', async () => body);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
  process.once('SIGTERM', () => {
    app.close().then(() => process.exit(0), () => process.exit(1));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`serve-ceiling failed: ${String(err)}\n`);
  process.exit(1);
});
