export { OtpClient, type OtpClientOptions, type CallOptions, type CreateOptions } from './otp-client.js';
export { OtpServiceError, OtpAuthError, OtpConnectionError, unexpectedResponse, type OtpErrorCode } from './errors.js';
export { verifyWebhook, WebhookVerificationError, type WebhookHeaders, type VerifyWebhookOptions } from './webhook.js';
export type { RetryNotice } from './retry.js';
export type {
  VerificationRecord,
  CreateVerificationBody,
  LookupBody,
  LookupRecord,
  StatsQuery,
  DailyStats,
  WebhookEvent,
  WebhookDelivery,
  ErrorCode,
  ErrorDetail,
  TokenErrorCode,
  Scope,
} from './types.js';
export type { paths, components, operations } from './api.js';
