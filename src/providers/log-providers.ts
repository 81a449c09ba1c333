import type { Logger } from 'pino';
import type { CallPlacer, DroppedCall, SendResult, SmsMessage, SmsSender } from '../domain/channels.js';

/** One SMS or call as the log providers keep it. */
export interface LoggedMessage {
  readonly verificationId: string;
  readonly channel: 'sms' | 'call';
  readonly recipient: string;
  readonly sender: string;
  readonly body: string;
}

/** Where the log providers keep what they "sent", so a developer can read codes back (port). */
export interface MessageLog {
  record(entry: LoggedMessage): Promise<void>;
}

/**
 * Stores a message, then logs it with `redacted` standing in for anything secret. The provider id is
 * derived from the verification, so a retried send is recognisable as the same message.
 */
async function storeAndLog(
  messages: MessageLog,
  logger: Logger,
  entry: LoggedMessage,
  redacted: Record<string, string>,
): Promise<SendResult> {
  await messages.record(entry);
  logger.info({ provider: 'log', channel: entry.channel, to: entry.recipient, ...redacted }, `${entry.channel} stored by the log provider`);
  return { ok: true, providerId: `log-${entry.channel}-${entry.verificationId}` };
}

/** The default SMS provider for development and tests: it stores each message; the log line hides the code. */
export class LogSmsSender implements SmsSender {
  readonly name = 'log';
  constructor(
    private readonly messages: MessageLog,
    private readonly logger: Logger,
  ) {}

  send(message: SmsMessage): Promise<SendResult> {
    const entry = {
      verificationId: message.verificationId,
      channel: 'sms',
      recipient: message.to,
      sender: message.from,
      body: message.body,
    } as const;
    return storeAndLog(this.messages, this.logger, entry, {
      from: message.from,
      body: message.body.split(message.code).join('******'),
    });
  }
}

/** The default call provider: stores each dropped call (the caller id is the code); the log hides the code. */
export class LogCallPlacer implements CallPlacer {
  readonly name = 'log';
  constructor(
    private readonly messages: MessageLog,
    private readonly logger: Logger,
  ) {}

  placeCall(call: DroppedCall): Promise<SendResult> {
    const entry = {
      verificationId: call.verificationId,
      channel: 'call',
      recipient: call.to,
      sender: call.callerId,
      body: `dropped call from ${call.callerId}`,
    } as const;
    return storeAndLog(this.messages, this.logger, entry, { callerId: `${call.callerId.slice(0, -4)}****` });
  }
}
