import { request } from 'undici';
import type { HttpBaseUrl } from '../http-provider.js';
import { readBounded } from '../http-provider.js';
import { metaUserAgent } from './meta.js';

/**
 * The authentication template behind the `meta` provider's sends (contract 13): created and listed through the
 * WhatsApp Business Account's `message_templates` edge, for `otp-service whatsapp template create|list`.
 */

export interface MetaAccount {
  readonly accessToken: string;
  readonly wabaId: string;
  readonly baseUrl: HttpBaseUrl;
  readonly apiVersion: string;
}

export interface AuthenticationTemplate {
  readonly name: string;
  /** Meta's language code, e.g. en_US. */
  readonly language: string;
  /** The footer's "This code expires in N minutes." (1 to 90). */
  readonly expiryMinutes: number;
  /** Android one-tap autofill: the app's package and its signing key hash; null: a copy-code button. */
  readonly oneTap: { readonly packageName: string; readonly signatureHash: string } | null;
}

/** Meta's answer as it came: its HTTP status and its JSON (or text). */
export interface MetaAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** `--one-tap PACKAGE:SIGNATURE_HASH` (an Android package name and the 11-character app signing hash). */
export function parseOneTap(raw: string): AuthenticationTemplate['oneTap'] | string {
  const match = /^([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+):([A-Za-z0-9+/]{11})$/.exec(raw);
  if (!match?.[1] || !match[2]) return '--one-tap must be PACKAGE:SIGNATURE_HASH, e.g. com.example.app:K8a/AINcGX7 (the 11-character app signing hash)';
  return { packageName: match[1], signatureHash: match[2] };
}

/** The body of a create: category AUTHENTICATION, the security line, the expiry footer and one OTP button. */
export function authenticationTemplateBody(t: AuthenticationTemplate): Record<string, unknown> {
  const button = t.oneTap
    ? { type: 'OTP', otp_type: 'ONE_TAP', text: 'Copy code', autofill_text: 'Autofill', supported_apps: [{ package_name: t.oneTap.packageName, signature_hash: t.oneTap.signatureHash }] }
    : { type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' };
  return {
    name: t.name,
    language: t.language,
    category: 'AUTHENTICATION',
    components: [
      { type: 'BODY', add_security_recommendation: true },
      { type: 'FOOTER', code_expiration_minutes: t.expiryMinutes },
      { type: 'BUTTONS', buttons: [button] },
    ],
  };
}

/** POST /{version}/{waba-id}/message_templates. */
export function createTemplate(account: MetaAccount, template: AuthenticationTemplate, signal: AbortSignal): Promise<MetaAnswer> {
  return call(account, 'POST', '', JSON.stringify(authenticationTemplateBody(template)), signal);
}

/** GET /{version}/{waba-id}/message_templates with each template's name, language, category and status. */
export function listTemplates(account: MetaAccount, signal: AbortSignal): Promise<MetaAnswer> {
  return call(account, 'GET', '?fields=name,language,category,status&limit=100', null, signal);
}

async function call(account: MetaAccount, method: 'GET' | 'POST', query: string, body: string | null, signal: AbortSignal): Promise<MetaAnswer> {
  const path = `${account.baseUrl.pathPrefix}/${account.apiVersion}/${account.wabaId}/message_templates${query}`;
  const answer = await request(`${account.baseUrl.origin}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${account.accessToken}`,
      accept: 'application/json',
      'user-agent': metaUserAgent,
      ...(body !== null && { 'content-type': 'application/json' }),
    },
    ...(body !== null && { body }),
    signal,
  });
  const raw = (await readBounded(answer.body))?.toString('utf8') ?? '';
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // Not JSON: shown as text.
  }
  return { status: answer.statusCode, body: parsed };
}
