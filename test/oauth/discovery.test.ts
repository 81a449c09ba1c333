import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/** Contract 2: an off-the-shelf OAuth client gets a working token through discovery, over real HTTP. */
forEachDatabase('discovery with oauth4webapi', (kind) => {
  let h: Harness;
  let issuer: URL;
  before(async () => {
    h = await createHarness(kind);
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const address = h.app.server.address();
    assert.ok(address && typeof address === 'object');
    issuer = new URL(`http://127.0.0.1:${address.port}`);
  });
  after(() => h.close());

  async function tokenThroughDiscovery(
    c: ClientCredentials,
    auth: oauth.ClientAuth,
    scope: string,
  ): Promise<{ as: oauth.AuthorizationServer; result: oauth.TokenEndpointResponse }> {
    const discovery = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true });
    const as = await oauth.processDiscoveryResponse(issuer, discovery);
    const client: oauth.Client = { client_id: c.clientId };
    const response = await oauth.clientCredentialsGrantRequest(as, client, auth, new URLSearchParams({ scope }), {
      [oauth.allowInsecureRequests]: true,
    });
    const result = await oauth.processClientCredentialsResponse(as, client, response);
    return { as, result };
  }

  async function fetchVerification(token: string, id: string): Promise<Response> {
    return fetch(new URL(`/v1/otp/${id}`, issuer), { headers: { authorization: `Bearer ${token}` } });
  }

  it('discovers the token endpoint, gets a token with client_secret_basic and uses it on GET /v1/otp/{id}', async () => {
    const c = await h.client(['otp:send', 'otp:verify']);
    const { as, result } = await tokenThroughDiscovery(c, oauth.ClientSecretBasic(c.clientSecret), 'otp:send otp:verify');
    assert.equal(as.issuer, issuer.origin);
    assert.equal(as.token_endpoint, `${issuer.origin}/oauth2/token`);
    assert.equal(result.token_type, 'bearer');
    assert.equal(result.scope, 'otp:send otp:verify');
    assert.equal(result.expires_in, h.config.TOKEN_TTL_SECONDS);

    const created = await fetch(new URL('/v1/otp/request', issuer), {
      method: 'POST',
      headers: { authorization: `Bearer ${result.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ countryCode: '+234', phoneNumber: '08031234567' }),
    });
    assert.equal(created.status, 200);
    const id = ((await created.json()) as { data: { id: string } }).data.id;
    const fetched = await fetchVerification(result.access_token, id);
    assert.equal(fetched.status, 200);
    assert.ok(fetched.headers.get('x-request-id'));
    const body = (await fetched.json()) as { status: boolean; message: string; data: { id: string; status: string } };
    assert.equal(body.status, true);
    assert.equal(body.message, 'Verification fetched');
    assert.equal(body.data.id, id);
    assert.equal(body.data.status, 'PENDING');
  });

  it('also works with client_secret_post', async () => {
    const c = await h.client(['otp:verify']);
    const { result } = await tokenThroughDiscovery(c, oauth.ClientSecretPost(c.clientSecret), 'otp:verify');
    const res = await fetchVerification(result.access_token, '00000000-0000-4000-8000-000000000000');
    assert.equal(res.status, 404, 'authenticated, and the id is unknown');
  });

  it('surfaces a wrong secret as an OAuth error the client library understands', async () => {
    const c = await h.client(['otp:send']);
    // With Basic, the 401 carries a Basic challenge, which the library reports as such.
    await assert.rejects(tokenThroughDiscovery(c, oauth.ClientSecretBasic('cs_wrong'), 'otp:send'), (err: unknown) => {
      assert.ok(err instanceof oauth.WWWAuthenticateChallengeError, String(err));
      assert.equal(err.status, 401);
      assert.equal(err.cause[0]?.scheme, 'basic');
      return true;
    });
    await assert.rejects(tokenThroughDiscovery(c, oauth.ClientSecretPost('cs_wrong'), 'otp:send'), (err: unknown) => {
      assert.ok(err instanceof oauth.ResponseBodyError, String(err));
      assert.equal(err.error, 'invalid_client');
      assert.equal(err.status, 401);
      return true;
    });
  });
});
