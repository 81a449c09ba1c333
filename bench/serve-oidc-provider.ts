/**
 * The token baseline: panva's oidc-provider with only the client-credentials grant, opaque access tokens and
 * its default in-memory adapter, one client authenticated by client_secret_post like our bench client.
 * Prints one JSON line {url, clientId, clientSecret, version}.
 */
import http from 'node:http';
import Provider from 'oidc-provider';
import { packageVersion } from './lib/package-version.js';

const clientId = 'bench-client';
const clientSecret = 'bench-secret-0123456789abcdef0123456789abcdef';

async function main(): Promise<void> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  const provider = new Provider(url, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_post',
        scope: 'otp:send otp:verify',
      },
    ],
    scopes: ['otp:send', 'otp:verify'],
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
    },
  });
  // Errors answered to clients are also emitted; a benchmark keeps quiet about them.
  provider.on('server_error', (_ctx, err) => process.stderr.write(`oidc-provider server_error: ${String(err)}\n`));
  server.on('request', provider.callback());
  const version = packageVersion('oidc-provider');
  process.stdout.write(`${JSON.stringify({ url, clientId, clientSecret, version })}\n`);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`serve-oidc-provider failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
