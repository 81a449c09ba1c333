import { startJsonReceiver, type JsonReceiver } from './json-receiver.js';

/**
 * The Telegram Gateway API as the bench's `telegram` provider reaches it: a local receiver of `POST /checkSendAbility`
 * and `POST /sendVerificationMessage` that answers both at once as the Gateway's documentation does (`ok: true`, a
 * RequestStatus with a `request_id` and a `request_cost`) and notes when each number's sendVerificationMessage
 * arrived, by its `phone_number` (E.164, `+234...`, the key pacedCreates gives each create). The ability check comes
 * first on the send path, so create-to-sendVerificationMessage has it inside. The requests' shape (bearer token,
 * fields, ranges) is what test/http/telegram-gateway.test.ts holds to the documentation; this receiver does not.
 */
export type TelegramReceiver = JsonReceiver; // arrivals of sendVerificationMessage by phone_number

/** What the Gateway says a message costs (US dollars). */
const requestCost = 0.01;

export function startTelegramReceiver(): Promise<TelegramReceiver> {
  let seq = 0;
  return startJsonReceiver((path, body) => {
    const phone = typeof body?.phone_number === 'string' ? body.phone_number : '';
    switch (path) {
      case '/checkSendAbility':
        return { key: null, body: { ok: true, result: { request_id: `chk${++seq}`, phone_number: phone, request_cost: requestCost, remaining_balance: 9.99 } } };
      case '/sendVerificationMessage':
        return {
          key: phone || null,
          body: {
            ok: true,
            result: {
              request_id: body?.request_id,
              phone_number: phone,
              request_cost: requestCost,
              remaining_balance: 9.98,
              delivery_status: { status: 'sent', updated_at: Math.floor(Date.now() / 1000) },
            },
          },
        };
      case '/revokeVerificationMessage':
        return { key: null, body: { ok: true, result: true } };
      default:
        return { key: null, status: 404, body: { ok: false, error: 'METHOD_NOT_FOUND' } };
    }
  });
}
