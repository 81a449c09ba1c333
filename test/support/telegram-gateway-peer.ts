import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the Telegram Gateway API (core.telegram.org/gateway/api): no Telegram peer can run here,
 * so this receiver holds every request to what the Gateway's documentation says of it (POST with
 * `Authorization: Bearer <token>`, a JSON body, the fields of each method and their ranges), writes down what it
 * finds wrong in `problems`, and answers as the documentation's RequestStatus examples do.
 */
export interface GatewayRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly params: Readonly<Record<string, unknown>>;
}

export interface GatewayPeer {
  readonly url: string;
  readonly requests: GatewayRequest[];
  /** What the requests got wrong by the documentation; a test expects none. */
  readonly problems: string[];
  /** Numbers the check says cannot receive a Telegram message. */
  readonly withoutTelegram: Set<string>;
  /** Numbers whose next sendVerificationMessage is answered 500 (once). */
  readonly failNextSend: Set<string>;
  stop(): Promise<void>;
}

export interface GatewayPeerOptions {
  readonly token: string;
  readonly callbackUrl: string;
  /** What `request_cost` says of a message. */
  readonly cost: number;
}

const e164 = /^\+[1-9]\d{6,14}$/;

export async function startGatewayPeer(options: GatewayPeerOptions): Promise<GatewayPeer> {
  const requests: GatewayRequest[] = [];
  const problems: string[] = [];
  const withoutTelegram = new Set<string>();
  const failNextSend = new Set<string>();
  /** request_id of each check, by number: the send must name it. */
  const checked = new Map<string, string>();
  let seq = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const problem = (text: string) => problems.push(`${path}: ${text}`);
      let params: Record<string, unknown> = {};
      try {
        params = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        problem('the body is not JSON');
      }
      requests.push({ method: req.method ?? '', path, headers: req.headers, params });
      if (req.method !== 'POST') problem(`method ${req.method ?? ''}`);
      if (req.headers.authorization !== `Bearer ${options.token}`) problem('no Authorization: Bearer <token>');
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) problem('not application/json');
      const answer = (body: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const phone = params.phone_number;
      const phoneOk = typeof phone === 'string' && e164.test(phone);
      seq += 1;
      switch (path) {
        case '/checkSendAbility': {
          if (!phoneOk) problem('phone_number is not E.164');
          if (Object.keys(params).some((k) => k !== 'phone_number')) problem(`unexpected fields ${Object.keys(params).join(', ')}`);
          if (typeof phone === 'string' && withoutTelegram.has(phone)) return answer({ ok: false, error: 'PHONE_NUMBER_NOT_AVAILABLE' });
          const id = `chk${seq}`;
          if (typeof phone === 'string') checked.set(phone, id);
          return answer({ ok: true, result: { request_id: id, phone_number: phone, request_cost: options.cost, remaining_balance: 9.99 } });
        }
        case '/sendVerificationMessage': {
          if (!phoneOk) problem('phone_number is not E.164');
          const code = params.code;
          if (typeof code !== 'string' || !/^\d{4,8}$/.test(code)) problem('code is not 4 to 8 digits');
          const ttl = params.ttl;
          if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 30 || ttl > 3600) problem(`ttl ${String(ttl)} is not 30 to 3600 seconds`);
          if (params.callback_url !== options.callbackUrl) problem(`callback_url ${String(params.callback_url)}`);
          if (typeof phone !== 'string' || params.request_id !== checked.get(phone)) problem('request_id is not the ability check\'s');
          const known = new Set(['phone_number', 'request_id', 'code', 'ttl', 'callback_url']);
          if (Object.keys(params).some((k) => !known.has(k))) problem(`unexpected fields ${Object.keys(params).join(', ')}`);
          if (typeof phone === 'string' && failNextSend.delete(phone)) {
            res.writeHead(500, { 'content-type': 'application/json' });
            return res.end(JSON.stringify({ ok: false, error: 'INTERNAL_ERROR' }));
          }
          return answer({
            ok: true,
            result: {
              request_id: params.request_id,
              phone_number: phone,
              request_cost: options.cost,
              remaining_balance: 9.98,
              delivery_status: { status: 'sent', updated_at: 1764064800 },
            },
          });
        }
        case '/revokeVerificationMessage':
          if (typeof params.request_id !== 'string' || params.request_id === '') problem('no request_id');
          if (Object.keys(params).some((k) => k !== 'request_id')) problem(`unexpected fields ${Object.keys(params).join(', ')}`);
          return answer({ ok: true, result: true });
        default:
          problem('no such method');
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ ok: false, error: 'METHOD_NOT_FOUND' }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    problems,
    withoutTelegram,
    failNextSend,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
