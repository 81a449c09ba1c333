import type { LoggedMessage, Outgoing, ProviderModule, SendResult } from '../channels/provider-port.js';

/**
 * The development provider of every channel: it keeps each message or call in the database (where
 * `otp-service` and the development inbox read them back) and logs it with the code hidden. Nothing leaves the
 * machine. The message id is derived from the send, so a retried send is recognisable as the same message.
 */
export const logProvider: ProviderModule = {
  name: 'log',
  channels: ['sms', 'call', 'whatsapp'],
  settings: {},
  callbacks: false,
  create(_values, context) {
    return {
      name: 'log',
      channels: ['sms', 'call', 'whatsapp'],
      start: async () => undefined,
      stop: async () => undefined,
      async send(message: Outgoing): Promise<SendResult> {
        await context.messageLog.record(loggedMessage(message));
        if (message.channel === 'call') {
          context.logger.info(
            { provider: 'log', channel: 'call', to: message.to, callerId: `${message.callerId.slice(0, -4)}****` },
            'call stored by the log provider',
          );
        } else {
          context.logger.info(
            { provider: 'log', channel: message.channel, to: message.to, from: message.from, body: message.text.split(message.code).join('******') },
            `${message.channel} message stored by the log provider`,
          );
        }
        return { kind: 'accepted', messageId: `log-${message.channel}-${message.sendId}` };
      },
    };
  },
};

/** A message or call as the log keeps it: what the phone shows (a call: the number it comes from). */
export function loggedMessage(message: Outgoing): LoggedMessage {
  const base = { verificationId: message.verificationId, channel: message.channel, recipient: message.to };
  if (message.channel === 'call') return { ...base, sender: message.callerId, body: `dropped call from ${message.callerId}` };
  return { ...base, sender: message.from, body: message.text };
}
