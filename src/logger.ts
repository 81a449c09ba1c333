import pino, { type DestinationStream, type Logger } from 'pino';
import { requestForLog } from './http/log-redaction.js';

/**
 * The process logger. Authorization headers and anything named like a secret or code are censored, whatever
 * object they ride in; request URLs are logged without their query string or a callback path's secret.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    serializers: { req: requestForLog },
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
  };
  return destination ? pino(options, destination) : pino(options);
}
