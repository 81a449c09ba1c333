import { createHmac } from 'node:crypto';

/**
 * ZITADEL's HTTP SMS provider as a sender, written from zitadel/zitadel's source because no ZITADEL runs here
 * (a Go server with its own database). Each piece names the file it follows:
 *
 * - `pkg/actions/signing.go`, ComputeSignatureHeader: `t=<t.Unix()>` then one `v1=<hex>` per signing key, joined
 *   with `,`; computeSignature: HMAC-SHA256 keyed with the key's bytes over `strconv.FormatInt(t.Unix(), 10)`,
 *   `.`, and the payload.
 * - `internal/notification/channels/webhook/channel.go`: POST (config_sms.go sets http.MethodPost), header
 *   `Content-Type: application/json`, and `ZITADEL-Signature` only when the provider has a signing key.
 * - `internal/notification/messages/json.go`: the payload is `json.Marshal(serializable)`, which Go writes with
 *   struct fields in declaration order, map keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped (goJson below).
 * - `internal/notification/types/user_phone.go`: serializableData `{ contextInfo, templateData, args }` (each
 *   omitempty); contextInfo `{ recipientPhoneNumber, eventType, provider }`; args with the first letter lowered.
 * - `internal/notification/channels/sms/config.go`: provider `{ id, description }` (both omitempty).
 * - `internal/notification/templates/templateData.go`: TemplateData's fields and JSON keys, all omitempty.
 * - `internal/notification/types/user_email.go` (mapNotifyUserToArgs): the user's arguments every message carries;
 *   `phone_verification_code.go` adds `Code` and `Domain`, `otp.go` adds `OTP`, `Origin`, `Domain`, `Expiry`.
 */
export function zitadelSignatureHeader(at: Date, payload: string, ...signingKeys: string[]): string {
  const t = Math.floor(at.getTime() / 1000);
  return [`t=${t}`, ...signingKeys.map((k) => `v1=${createHmac('sha256', k).update(`${t}`).update('.').update(payload).digest('hex')}`)].join(',');
}

/** A ZITADEL user as mapNotifyUserToArgs puts it in args (keys as Go's map gives them, before lowering). */
export interface NotifyUser {
  readonly id: string;
  readonly resourceOwner: string;
  readonly username: string;
  readonly phone: string;
}

/** Which of ZITADEL's SMS messages: phone verification (`Code`) or a one-time password (`OTP`). */
export type ZitadelSmsKind = 'phone-verification' | 'otp-sms';

/** The body ZITADEL's generateSms posts to an HTTP provider, as json.Marshal writes it (the exact bytes signed). */
export function zitadelSmsPayload(kind: ZitadelSmsKind, user: NotifyUser, code: string, provider = { id: '289748723492837492', description: 'otp-service' }): string {
  const args: Record<string, unknown> = {
    // mapNotifyUserToArgs
    UserID: user.id,
    OrgID: user.resourceOwner,
    UserName: user.username,
    FirstName: 'Ada',
    LastName: 'Obi',
    NickName: '',
    DisplayName: 'Ada Obi',
    LastEmail: `${user.username}@example.test`,
    VerifiedEmail: `${user.username}@example.test`,
    LastPhone: user.phone,
    VerifiedPhone: kind === 'otp-sms' ? user.phone : '',
    PreferredLoginName: `${user.username}@acme.auth.example.test`,
    LoginName: `${user.username}@acme.auth.example.test`,
    LoginNames: [`${user.username}@acme.auth.example.test`],
    ChangeDate: '2026-11-25T09:14:03.118734Z',
    CreationDate: '2026-11-20T16:40:51.402231Z',
    Domain: 'auth.example.test',
    ...(kind === 'phone-verification'
      ? { Code: code }
      : // otpArgs: Expiry is a time.Duration, which Go writes as its nanoseconds.
        { OTP: code, Origin: 'https://auth.example.test', Expiry: 300_000_000_000 }),
  };
  // generateSms: caseArgs[strings.ToLower(string(k[0]))+k[1:]] = v
  const caseArgs = Object.fromEntries(Object.entries(args).map(([k, v]) => [k.charAt(0).toLowerCase() + k.slice(1), v]));
  const text =
    kind === 'phone-verification'
      ? `Your code to verify your phone is ${code} & it expires soon <auth.example.test>`
      : `Your one-time password is ${code}. Use it within the next 5m0s.`;
  const body = {
    contextInfo: {
      recipientPhoneNumber: user.phone,
      eventType: kind === 'phone-verification' ? 'user.human.phone.code.added' : 'user.human.otp.sms.code.added',
      provider,
    },
    // TemplateData in declaration order, omitempty dropping the empty ones (an SMS has no url or button).
    templateData: {
      title: kind === 'phone-verification' ? 'Verify phone' : 'One-Time Password',
      preHeader: kind === 'phone-verification' ? 'Verify phone' : 'One-Time Password',
      subject: kind === 'phone-verification' ? 'Verify phone' : 'One-Time Password',
      greeting: 'Hello Ada Obi,',
      text,
      primaryColor: '#5469d4',
      backgroundColor: '#fafafa',
      fontColor: '#000000',
      fontFamily: '-apple-system, BlinkMacSystemFont, Segoe UI, Lato, Arial, Helvetica, sans-serif',
      footerText: 'ACME',
    },
    args: caseArgs,
  };
  return goJson(body);
}

/**
 * encoding/json's Marshal for the values above: struct-like objects keep their order (contextInfo and args are Go
 * maps, so their keys are sorted), and HTML-sensitive characters are escaped as Go's default encoder escapes them.
 */
function goJson(body: { contextInfo: Record<string, unknown>; templateData: Record<string, unknown>; args: Record<string, unknown> }): string {
  const sorted = (o: Record<string, unknown>) => Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
  const json = JSON.stringify({ contextInfo: sorted(body.contextInfo), templateData: body.templateData, args: sorted(body.args) });
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
