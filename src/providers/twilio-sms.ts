import type { DeliveryReceipt, OutgoingSms, OutgoingWhatsApp, ProviderContext, SendResult } from '../channels/provider-port.js';
import { decideTwilioAnswer, type TwilioAccountApi, type TwilioRequestKind } from './twilio-api.js';

/**
 * The Messages part of the `twilio` provider: SMS and WhatsApp through Programmable Messaging, and their status
 * callbacks (a WhatsApp message's come signed the same way, with MessageStatus read for it).
 */

const message: TwilioRequestKind = {
  noun: 'message',
  errors: {
    21211: "invalid 'To' number",
    21212: "invalid 'From' number",
    21214: "'To' number cannot be reached",
    21217: "'To' number does not appear to be valid",
    21219: "'To' number not verified (trial account)",
    21401: 'invalid phone number',
    21407: 'this number type does not support SMS',
    21408: "sending to the 'To' number's region is not enabled",
    21421: 'invalid phone number',
    21606: "'From' number cannot send messages to this destination",
    21610: "'To' number has unsubscribed (STOP)",
    21612: "'To' number is not reachable via SMS from this sender",
    21614: "'To' number is not a mobile number",
    21660: "'From' number does not belong to this account",
    30003: 'unreachable handset',
    30004: 'message blocked',
    30005: 'unknown destination handset',
    30006: 'landline or unreachable carrier',
    30007: 'message filtered by the carrier',
  },
};

/** A WhatsApp message's Twilio errors that no retry fixes (https://www.twilio.com/docs/api/errors). */
const whatsappMessage: TwilioRequestKind = {
  noun: 'WhatsApp message',
  errors: {
    ...message.errors,
    63001: 'channel authentication failed',
    63003: "the channel could not find the 'To' address (not on WhatsApp)",
    63007: "no WhatsApp channel for the 'From' address",
    63024: 'invalid message recipient',
    63027: 'the template does not exist for this language',
    63028: 'the template parameters do not match',
    63032: "the user's number is part of an experiment",
  },
};

/** TWILIO_WHATSAPP_SENDER and TWILIO_WHATSAPP_CONTENT_SID. */
export interface TwilioWhatsApp {
  /** E.164: messages come From whatsapp:<sender>. */
  readonly sender: string;
  /** HX...: the approved authentication template, its variable {{1}} the code. */
  readonly contentSid: string;
}

/** MessageStatus of a status callback -> our receipt status; absent: not a delivery outcome (inbound, unknown). */
const receiptStatuses: Readonly<Record<string, DeliveryReceipt['status']>> = {
  accepted: 'SENT',
  scheduled: 'SENT',
  queued: 'SENT',
  sending: 'SENT',
  sent: 'SENT',
  delivered: 'DELIVERED',
  read: 'DELIVERED',
  undelivered: 'UNDELIVERED',
  failed: 'UNDELIVERED',
  canceled: 'UNDELIVERED',
};

export class TwilioMessages {
  constructor(
    private readonly api: TwilioAccountApi,
    private readonly context: ProviderContext,
    /** TWILIO_MESSAGING_SERVICE_SID: sends through the service (MessagingServiceSid) instead of From. */
    private readonly messagingServiceSid: string | undefined,
    /** Null when twilio is not configured for WhatsApp. */
    private readonly whatsapp: TwilioWhatsApp | null = null,
  ) {}

  /**
   * POST /Messages.json for WhatsApp: To and From as `whatsapp:` addresses, the approved template (ContentSid)
   * with the code as its variable 1, and the signed StatusCallback as for SMS.
   */
  sendWhatsApp(wa: OutgoingWhatsApp, signal: AbortSignal): Promise<SendResult> {
    if (this.whatsapp === null) {
      return Promise.resolve({ kind: 'permanent', reason: 'twilio has no WhatsApp sender (TWILIO_WHATSAPP_SENDER, TWILIO_WHATSAPP_CONTENT_SID)' });
    }
    const form = new URLSearchParams({
      To: `whatsapp:${wa.to}`,
      From: `whatsapp:${this.whatsapp.sender}`,
      ContentSid: this.whatsapp.contentSid,
      ContentVariables: JSON.stringify({ 1: wa.code }),
    });
    if (this.context.callbackUrl !== null) form.set('StatusCallback', this.context.callbackUrl);
    return this.api.postForm('/Messages.json', form, signal, (answer) => decideTwilioAnswer(answer, whatsappMessage, this.context.logger));
  }

  /** POST /Messages.json: To, From or MessagingServiceSid, Body, StatusCallback. */
  send(sms: OutgoingSms, signal: AbortSignal): Promise<SendResult> {
    const form = new URLSearchParams({ To: sms.to });
    if (this.messagingServiceSid !== undefined) {
      form.set('MessagingServiceSid', this.messagingServiceSid);
    } else {
      form.set('From', sms.from);
    }
    form.set('Body', sms.text);
    // Twilio signs its callbacks with the auth token, so the URL carries nothing secret.
    if (this.context.callbackUrl !== null) form.set('StatusCallback', this.context.callbackUrl);
    return this.api.postForm('/Messages.json', form, signal, (answer) => decideTwilioAnswer(answer, message, this.context.logger));
  }

  /** The receipt of a message's (already verified) status callback; none for a status that is no outcome. */
  receipts(form: URLSearchParams): readonly DeliveryReceipt[] {
    const messageId = form.get('MessageSid');
    const twilioStatus = form.get('MessageStatus');
    const status = twilioStatus === null ? undefined : receiptStatuses[twilioStatus];
    if (messageId === null || messageId === '' || twilioStatus === null || status === undefined) return [];
    const errorCode = form.get('ErrorCode');
    const detail = errorCode !== null && errorCode !== '' ? `${twilioStatus} (ErrorCode ${errorCode})` : twilioStatus;
    return [{ messageId, status, detail, at: null }];
  }
}
