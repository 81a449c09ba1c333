import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { startPerlSmsc, type PerlSmsc } from '../providers/smpp-peers.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';
import type { DbKind } from './databases.js';
import { createHarness, type Harness } from './harness.js';

/** A service with two SMS providers whose sends and receipts a test sees: a real SMSC, then an operator's gateway. */
export interface SmscAndGateway {
  readonly h: Harness;
  /** Debian's Net::SMPP SMSC (test/peers/smsc.pl): withholds receipts for numbers ending in 98, reports 99 UNDELIV. */
  readonly smsc: PerlSmsc;
  /** The HTTP gateway: a local receiver that takes every send, as `gw-<send id>`. */
  readonly gateway: Receiver;
  /** HTTP_GATEWAY_SECRET, which signs the gateway's receipts. */
  readonly secret: string;
  close(): Promise<void>;
}

/** Starts both peers and the service with SMS_PROVIDER=smpp,http (and `env`), its providers started. */
export async function startSmscAndGateway(kind: DbKind, env: Record<string, string> = {}): Promise<SmscAndGateway> {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const smsc = await startPerlSmsc('otpsvc', 'bindpass');
  const gateway = await startReceiver((req: { body: string }, res: http.ServerResponse) => {
    const { id } = JSON.parse(req.body) as { id: string };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: `gw-${id}` }));
  });
  const h = await createHarness(kind, {
    env: {
      SMS_PROVIDER: 'smpp,http',
      SMPP_URL: `smpp://otpsvc:bindpass@127.0.0.1:${smsc.port}`,
      HTTP_GATEWAY_URL: gateway.url,
      HTTP_GATEWAY_SECRET: secret,
      PUBLIC_BASE_URL: 'https://otp.example.test',
      ...env,
    },
  });
  await h.services.providers.start();
  return {
    h,
    smsc,
    gateway,
    secret,
    async close() {
      await h.services.providers.stop();
      await h.close();
      await gateway.close();
      await smsc.stop();
    },
  };
}
