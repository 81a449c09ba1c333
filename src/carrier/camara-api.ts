import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { jsonObject, readBounded, type HttpBaseUrl } from '../providers/http-provider.js';
import type { CamaraToken } from './camara-token.js';

/**
 * CAMARA network APIs at CAMARA_BASE_URL (the API root of their descriptions' servers), each call a JSON POST with
 * the client-credentials token. One keep-alive pool for all of them.
 */
export class CamaraApi {
  private readonly pool: Pool;

  constructor(
    private readonly base: HttpBaseUrl,
    /** The client-credentials token of `post`; null: only `postWith` is used. */
    private readonly token: CamaraToken | null,
  ) {
    this.pool = new Pool(base.origin, { connections: 8 });
  }

  /** The 200 answer's JSON object; throws on any other answer (a 401 forgets the token first). */
  async post(path: string, body: unknown, signal: AbortSignal): Promise<Readonly<Record<string, unknown>>> {
    if (!this.token) throw new Error('CAMARA: no client-credentials token here');
    return this.postWith(await this.token.get(), path, body, signal);
  }

  /**
   * The same call with a token of the caller's (a device's, from the authorization code grant: CAMARA Number
   * Verification); a 401 forgets the client-credentials token only when it was that one.
   */
  async postWith(token: string, path: string, body: unknown, signal: AbortSignal): Promise<Readonly<Record<string, unknown>>> {
    const answer = await this.pool.request({
      method: 'POST',
      path: `${this.base.pathPrefix}${path}`,
      // x-correlator: the descriptions' correlation id, echoed by the API, so that an operator's logs and a
      // support request can name one check.
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json',
        'user-agent': 'otp-service',
        'x-correlator': randomUUID(),
      },
      body: JSON.stringify(body),
      signal,
    });
    const json = jsonObject(await readBounded(answer.body));
    if (answer.statusCode === 401 && this.token) this.token.forget();
    if (answer.statusCode !== 200 || json === null) throw new Error(`CAMARA ${path} answered ${answer.statusCode}`);
    return json;
  }
}
