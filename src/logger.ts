import pino, { type Logger } from 'pino';

/**
 * The process logger. Authorization headers and anything named like a secret or code are censored,
 * whatever object they ride in.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        '*.client_secret',
        '*.clientSecret',
        '*.webhookSecret',
        '*.accessToken',
        '*.access_token',
        '*.otp',
      ],
      censor: '[redacted]',
    },
  });
}
