import type { LoggedMessage, Outgoing, ProviderModule, SendResult } from '../channels/provider-port.js';
import { spokenText } from '../channels/voice.js';

/** What the inbox keeps of one message or call: an SMS's or WhatsApp message's text, a dropped call's caller id, what a voice call says. */
export function loggedMessage(message: Outgoing): LoggedMessage {
  const base = { verificationId: message.verificationId, channel: message.channel, recipient: message.to };
  switch (message.channel) {
    case 'sms':
    case 'whatsapp':
      return { ...base, sender: message.from, body: message.text };
    case 'telegram':
      return { ...base, sender: 'Telegram', body: message.text };
    case 'silent':
      return { ...base, sender: 'silent', body: 'silent verification: nothing is sent' };
    case 'call':
      return { ...base, sender: message.callerId, body: `dropped call from ${message.callerId}` };
    case 'voice':
      return { ...base, sender: message.from, body: spokenText(message) };
  }
}

/** What the log line shows of a message: never the code. */
function logFields(message: Outgoing): object {
  switch (message.channel) {
    case 'sms':
    case 'whatsapp':
      return { to: message.to, from: message.from, body: message.text.split(message.code).join('******') };
    case 'call':
      return { to: message.to, callerId: `${message.callerId.slice(0, -4)}****` };
    case 'voice':
      return { to: message.to, from: message.from, language: message.language, repeat: message.repeat };
    case 'telegram':
    case 'silent':
      return { to: message.to };
  }
}

/**
 * The development provider of every channel: it keeps each message or call in the database (where
 * `otp-service` and the development inbox read them back) and logs it with the code hidden. Nothing leaves the
 * machine. The message id is derived from the send, so a retried send is recognisable as the same message.
 */
export const logProvider: ProviderModule = {
  name: 'log',
  channels: ['sms', 'call', 'whatsapp', 'voice', 'telegram'],
  settings: {},
  callbacks: false,
  create(_values, context) {
    return {
      name: 'log',
      channels: ['sms', 'call', 'whatsapp', 'voice', 'telegram'],
      start: async () => undefined,
      stop: async () => undefined,
      async send(message: Outgoing): Promise<SendResult> {
        await context.messageLog.record(loggedMessage(message));
        context.logger.info({ provider: 'log', channel: message.channel, ...logFields(message) }, `${message.channel} stored by the log provider`);
        // Nothing left this machine: it cost nothing, in any currency.
        return { kind: 'accepted', messageId: `log-${message.channel}-${message.sendId}`, price: { amount: '0', currency: 'XXX' } };
      },
    };
  },
};
