import type { Outgoing, ProviderModule, SendResult } from '../channels/provider-port.js';

/**
 * The development provider of both channels: it keeps each message or call in the database (where
 * `otp-service` and the development inbox read them back) and logs it with the code hidden. Nothing leaves the
 * machine. The message id is derived from the send, so a retried send is recognisable as the same message.
 */
export const logProvider: ProviderModule = {
  name: 'log',
  channels: ['sms', 'call'],
  settings: {},
  callbacks: false,
  create(_values, context) {
    return {
      name: 'log',
      channels: ['sms', 'call'],
      start: async () => undefined,
      stop: async () => undefined,
      async send(message: Outgoing): Promise<SendResult> {
        if (message.channel === 'sms') {
          await context.messageLog.record({
            verificationId: message.verificationId,
            channel: 'sms',
            recipient: message.to,
            sender: message.from,
            body: message.text,
          });
          context.logger.info(
            { provider: 'log', channel: 'sms', to: message.to, from: message.from, body: message.text.split(message.code).join('******') },
            'sms stored by the log provider',
          );
        } else {
          await context.messageLog.record({
            verificationId: message.verificationId,
            channel: 'call',
            recipient: message.to,
            sender: message.callerId,
            body: `dropped call from ${message.callerId}`,
          });
          context.logger.info(
            { provider: 'log', channel: 'call', to: message.to, callerId: `${message.callerId.slice(0, -4)}****` },
            'call stored by the log provider',
          );
        }
        return { kind: 'accepted', messageId: `log-${message.channel}-${message.sendId}` };
      },
    };
  },
};
