/** The introduction of the API reference (OpenAPI `info.description`, CommonMark). */
export const apiOverview = `
Verifies that a caller controls a phone number: create a verification, the service sends a code by SMS or
through a dropped call, then check the code the user gives. State changes are also posted to a webhook.

## Authentication
OAuth 2.0 client credentials: \`POST /oauth/token\` with \`client_id\`, \`client_secret\`, \`grant_type=client_credentials\`
and \`scope\` gives a bearer token (\`POST /oauth2/token\` answers in the pure RFC 6749 shape, for OAuth libraries,
and \`/.well-known/oauth-authorization-server\` names it). Send it as \`Authorization: Bearer <token>\` on every
\`/v1\` call. Each operation names the scope it needs; a token without it gets 403 \`INSUFFICIENT_SCOPE\`.
A client sees only its own verifications: another client's id is a 404.

## Answers
Success: \`{ "status": true, "message": "...", "data": { ... } }\`. Every error, on every path but the token
endpoints (which answer RFC 6749's \`{ "error", "error_description" }\`):
\`{ "status": false, "message": "...", "error": { "code": "...", "details": [ ... ] } }\`, plus \`data\` where an
operation says so. Match on \`error.code\`, not on the message. Each operation lists the codes it can answer.

Before any route runs, the HTTP server itself refuses, in that error shape and on every path: a request
line it cannot parse or \`Content-Length\` with \`Transfer-Encoding\` (400 \`BAD_REQUEST\`), headers over its limit
(431 \`HEADERS_TOO_LARGE\`), a request not received in time (408 \`REQUEST_TIMEOUT\`). Unknown routes are 404
\`NOT_FOUND\`.

## Conventions
JSON in and out (UTF-8); unknown fields in requests are ignored; bodies up to 16 KiB. Timestamps are ISO 8601
UTC with milliseconds; ids are UUIDs; phone numbers in answers are E.164. Limits (per number, per client, per
second and per day) answer 429 \`RATE_LIMITED\` with \`Retry-After\` in seconds.

## Webhooks
A verification with a \`webhookUrl\` has its state changes posted there, signed with the Standard Webhooks scheme:
see *Webhooks* below for the body and headers, and \`GET /v1/otp/{id}/webhooks\` for what became of each delivery.
`.trim();
