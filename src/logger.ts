import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
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
        // At the top of a log object, and one level down.
        'client_secret',
        'clientSecret',
        'webhookSecret',
        'hookSecret',
        'zitadelSigningKey',
        'accessToken',
        'access_token',
        'otp',
        '*.client_secret',
        '*.clientSecret',
        '*.webhookSecret',
        '*.hookSecret',
        '*.zitadelSigningKey',
        '*.accessToken',
        '*.access_token',
        '*.otp',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * How a process writes its log: lines for people when a person watches it (stdout is a terminal) outside
 * production; JSON lines otherwise, for whatever collects them.
 */
export function logFormat(stdoutIsTerminal: boolean, nodeEnv: string): 'pretty' | 'json' {
  return stdoutIsTerminal && nodeEnv !== 'production' ? 'pretty' : 'json';
}

/** The logger of the server and the worker, on stdout in the format logFormat picks. */
export function processLogger(level: string, nodeEnv: string): Logger {
  if (logFormat(process.stdout.isTTY === true, nodeEnv) === 'json') return createLogger(level);
  // Synchronous, in this thread (no transport worker): the same redaction applies before it is formatted.
  // Colours follow the terminal (NO_COLOR, TERM=dumb turn them off).
  return createLogger(level, pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
}

/** A command's logger: on stderr (or what `write` is), so that it never mixes with what the command prints (--json). */
export function commandLogger(level: string, write?: (line: string) => void): Logger {
  return createLogger(level, write ? { write } : pino.destination(2));
}
