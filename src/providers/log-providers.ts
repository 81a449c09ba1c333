import type { Logger } from 'pino';
import type { CallPlacer, DroppedCall, SendResult, SmsMessage, SmsSender } from '../domain/channels.js';

/** Where the log providers keep what they "sent", so a developer can read codes back (port). */
export interface MessageLog {
  record(entry: {
    verificationId: string;
    channel: 'sms' | 'call';
    recipient: string;
    sender: string;
    body: string;
  }): Promise<number>;
}

/**
 * The default SMS provider for development and tests: it stores each message and logs that it was sent,
 * with the code redacted from the log line.
 */
export class LogSmsSender implements SmsSender {
  readonly name = 'log';
  constructor(
    private readonly messages: MessageLog,
    private readonly logger: Logger,
  ) {}

  async send(message: SmsMessage): Promise<SendResult> {
    const id = await this.messages.record({
      verificationId: message.verificationId,
      channel: 'sms',
      recipient: message.to,
      sender: message.from,
      body: message.body,
    });
    this.logger.info(
      { provider: 'log', to: message.to, from: message.from, body: message.body.split(message.code).join('******') },
      'SMS stored by the log provider',
    );
    return { ok: true, providerId: `log-${id}` };
  }
}

/** The default call provider: stores each dropped call (the caller id is the code) and logs it redacted. */
export class LogCallPlacer implements CallPlacer {
  readonly name = 'log';
  constructor(
    private readonly messages: MessageLog,
    private readonly logger: Logger,
  ) {}

  async placeCall(call: DroppedCall): Promise<SendResult> {
    const id = await this.messages.record({
      verificationId: call.verificationId,
      channel: 'call',
      recipient: call.to,
      sender: call.callerId,
      body: `dropped call from ${call.callerId}`,
    });
    this.logger.info(
      { provider: 'log', to: call.to, callerId: `${call.callerId.slice(0, -4)}****` },
      'dropped call stored by the log provider',
    );
    return { ok: true, providerId: `log-${id}` };
  }
}
