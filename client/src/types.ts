import type { components, operations, paths } from './api.js';

/**
 * Names for the shapes of the generated document (api.ts) that a caller handles. They are derived, never
 * written out again, so a change of the service's schemas reaches them when api.ts is regenerated.
 */

/** A verification as the service returns it (contract 3.4). */
export type VerificationRecord = components['schemas']['VerificationRecord'];

/** The body of `createVerification` (contract 3.1). */
export type CreateVerificationBody = NonNullable<operations['createVerification']['requestBody']>['content']['application/json'];

/** The body of `lookup` (contract 11). */
export type LookupBody = NonNullable<operations['requestLookup']['requestBody']>['content']['application/json'];

/** A number lookup (contract 11). */
export type LookupRecord = operations['requestLookup']['responses'][200]['content']['application/json']['data'];

/** The days `getStats` asks for (contract 10): YYYY-MM-DD, UTC, both included; by default the last 7 days. */
export type StatsQuery = NonNullable<operations['getStats']['parameters']['query']>;

/** A client's traffic towards one country on one UTC day (contract 10). */
export type DailyStats = operations['getStats']['responses'][200]['content']['application/json']['data'][number];

/** The event a webhook carries (contract 4), as `verifyWebhook` returns it. */
export type WebhookEvent = components['schemas']['WebhookEvent'];

/** What became of a verification's webhook events: one entry per event, with its attempts. */
export type WebhookDelivery = operations['getVerificationWebhooks']['responses'][200]['content']['application/json']['data'][number];

/** The JSON bodies an operation answers with, whatever the status. */
type ResponseBodies<R> = { [S in keyof R]: R[S] extends { content: { 'application/json': infer B } } ? B : never }[keyof R];

/** Every JSON body any operation of the document answers with. */
type AnyResponseBody = {
  [P in keyof paths]: {
    [M in keyof paths[P]]: paths[P][M] extends { responses: infer R } ? ResponseBodies<R> : never;
  }[keyof paths[P]];
}[keyof paths];

/** A `/v1` error body (contract 5). */
export type V1ErrorBody = Extract<AnyResponseBody, { status: false; error: { code: string } }>;

/** Every `/v1` error code the document names (contract 5). */
export type ErrorCode = V1ErrorBody['error']['code'];

/** One entry of an error's `details`. */
export type ErrorDetail = NonNullable<V1ErrorBody['error']['details']>[number];

/** The RFC 6749 error codes the token endpoint answers with (contract 2). */
export type TokenErrorCode = Extract<
  ResponseBodies<operations['issueTokenRfc6749']['responses']>,
  { error: string }
>['error'];

/** The token endpoint's 200 body (RFC 6749 5.1). */
export type TokenResponse = operations['issueTokenRfc6749']['responses'][200]['content']['application/json'];

/** A scope a client may ask for (contract 2). */
export type Scope = 'otp:send' | 'otp:verify' | 'lookup:request' | 'lookup:status' | 'deposit:request';
