/**
 * The port every provider sits behind (SMS gateways, SMPP, call providers). The send worker and the
 * callback route are its consumers; a provider is one module under src/providers/ and one registry line.
 */

import type { Channel } from '../domain/channel-driver.js';
import type { Clock } from '../domain/ports.js';
import type { AwaitingProof, DeliveryReceipt, SendResult } from '../domain/send-result.js';
import type { SpokenWords } from '../domain/spoken-code.js';
import type { ServiceCheck, ServiceSend } from '../domain/service-code.js';

export type { Channel } from '../domain/channel-driver.js';

/** An SMS to send. */
export interface OutgoingSms {
  readonly channel: 'sms';
  /** Our id of this send (unique per verification and attempt chain); providers use it as their idempotency key or client reference where they have one. */
  readonly sendId: string;
  readonly verificationId: string;
  /** E.164, e.g. +2348012345678. */
  readonly to: string;
  /** E.164 sender number, or an alphanumeric sender id. */
  readonly from: string;
  readonly text: string;
  /** The code inside `text`, so that a provider can keep it out of its logs. */
  readonly code: string;
  /**
   * This code, or this text, must be the one delivered (an auth server's relayed code, a caller's own text,
   * contract 15): a verify service, which sends its own code in its own words, refuses it. Absent: ours to choose.
   */
  readonly codeIsGiven?: boolean;
}

/** A call to place and drop as soon as the phone rings. */
export interface OutgoingCall {
  readonly channel: 'call';
  readonly sendId: string;
  readonly verificationId: string;
  /** E.164. */
  readonly to: string;
  /** E.164 caller id whose last digits are the code. */
  readonly callerId: string;
}

/** A WhatsApp message: the code in the business's approved authentication template, with its copy-code button. */
export interface OutgoingWhatsApp {
  readonly channel: 'whatsapp';
  readonly sendId: string;
  readonly verificationId: string;
  /** E.164. */
  readonly to: string;
  /** E.164 business number it comes from (WHATSAPP_SENDER_NUMBER). */
  readonly from: string;
  readonly code: string;
  /** BCP 47 locale of the template's language (the verification's, else the client's default); null: English. */
  readonly locale: string | null;
  /** What the phone shows: the authentication template's fixed text with the code, for the development inbox. */
  readonly text: string;
}

/** A call that reads the code aloud once answered (contract 13, VOICE_CALL). */
export interface OutgoingVoice {
  readonly channel: 'voice';
  readonly sendId: string;
  readonly verificationId: string;
  /** E.164. */
  readonly to: string;
  /** E.164 number the call comes from (VOICE_CALLER_NUMBER). */
  readonly from: string;
  /** The code, for providers that speak it themselves (SIP plays its own audio of each digit). */
  readonly code: string;
  /** BCP 47 language to speak in (`en`, `fr-CA`): the verification's locale, else the client's default, else `en`. */
  readonly language: string;
  /** One reading of the code in that language, digits one by one: "Your code is 4, 1, 2, 9, 0, 7." */
  readonly sentence: string;
  /** The sentence's words around the digits (the client's voice template, or the default), for SIP's own audio. */
  readonly words: SpokenWords;
  /** How many times the sentence is read (VOICE_REPEAT). */
  readonly repeat: number;
}

/** A code for Telegram's Verification Codes account to deliver (contract 19, TELEGRAM). */
export interface OutgoingTelegram {
  readonly channel: 'telegram';
  readonly sendId: string;
  readonly verificationId: string;
  /** E.164. */
  readonly to: string;
  /** The service's own code, digits. */
  readonly code: string;
  /** When the code expires: the message's time to live is what is left of it when it goes. */
  readonly expiresAt: Date;
  /** What the development inbox shows; Telegram writes the real message itself. */
  readonly text: string;
}

/**
 * A silent verification's step (contract 19, SILENT): nothing goes to the phone; the device proves its number
 * itself (a Firebase PNV token, or CAMARA Number Verification over its mobile data) until `deadline`.
 */
export interface OutgoingSilent {
  readonly channel: 'silent';
  readonly sendId: string;
  readonly verificationId: string;
  /** E.164: the number the device must prove. */
  readonly to: string;
  /** When the step fails without a proof (SILENT_TIMEOUT_SECONDS after the create). */
  readonly deadline: Date;
}

export type Outgoing = OutgoingSms | OutgoingCall | OutgoingWhatsApp | OutgoingVoice | OutgoingTelegram | OutgoingSilent;

export type { AwaitingProof, DeliveryReceipt, SendResult, StepAnswer } from '../domain/send-result.js';
export type { ServiceCheck, ServiceSend } from '../domain/service-code.js';

/** An inbound HTTP callback as received, before any parsing: signatures are computed over the raw form. */
export interface CallbackRequest {
  readonly method: string;
  /** The full public URL the provider called: PUBLIC_BASE_URL + path + query (Twilio signs it). */
  readonly url: string;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly rawBody: Buffer;
}

/**
 * What a callback comes to: refused for its signature (bad, missing or stale: 403), refused for its body (well
 * signed but not a shape the provider sends: 400), or receipts to record. A refusal changes nothing.
 */
export type CallbackResult =
  | { readonly kind: 'forbidden'; readonly reason: string }
  | { readonly kind: 'malformed'; readonly reason: string }
  | { readonly kind: 'receipts'; readonly receipts: readonly DeliveryReceipt[] };

/** One provider of one or more channels. */
export interface Provider {
  /** The name in SMS_PROVIDER / CALL_PROVIDER. */
  readonly name: string;
  /**
   * The account or bind its message ids are unique within (SMPP `system_id@host:port`, a Twilio account SID);
   * absent: one per provider. Receipts are matched to sends by provider, account and message id.
   */
  readonly account?: string;
  readonly channels: readonly Channel[];
  /** Opens long-lived connections (SMPP bind); resolves once ready to send or failed for a reason it logs. */
  start(): Promise<void>;
  /** Closes them (SMPP unbind); sends in flight are allowed to end first. */
  stop(): Promise<void>;
  /**
   * Hands one message or call to the provider. `signal` aborts it (the caller's time-out): the provider then
   * returns a transient result promptly.
   */
  send(message: Outgoing, signal: AbortSignal): Promise<SendResult>;

  /**
   * A silent step (contract 19, SILENT) instead of a send: nothing goes to the phone, the device proves its number
   * itself, and the step waits for that proof until the message's deadline. Only the silent channel's providers
   * (firebase, camara) have it; the send worker asks it instead of `send` for their steps.
   */
  awaitProof?(message: OutgoingSilent): AwaitingProof;

  /**
   * A verify service (contract 19: twilio-verify, vonage-verify) makes and sends its own code, and checks it: asks
   * whether `code` is the code of `send` (one this provider made). Resolves `unavailable` promptly once `signal`
   * aborts, and for any failure (never rejects). Absent: the provider carries our code, which is checked here.
   */
  checkCode?(send: ServiceSend, code: string, signal: AbortSignal): Promise<ServiceCheck>;

  /**
   * Withdraws a message whose code is no longer needed (the verification succeeded or was cancelled), if it has
   * not arrived yet (Telegram's revokeVerificationMessage). Best effort: resolves whatever the provider answers,
   * and promptly once `signal` aborts. Absent: the provider has no such thing.
   */
  revoke?(messageId: string, signal: AbortSignal): Promise<void>;

  /** Checks and reads an inbound callback by the provider's own signature scheme; absent when it sends none. */
  verifyCallback?(request: CallbackRequest): CallbackResult;
  /**
   * Answers a GET subscription handshake on its callback route (Meta's `hub.challenge`): the text to send back
   * as it is, or a refusal (403). Absent: GETs are callbacks like POSTs.
   */
  handshake?(request: CallbackRequest): { readonly kind: 'challenge'; readonly body: string } | { readonly kind: 'forbidden'; readonly reason: string };
}

/** What a provider module gets from the service. */
export interface ProviderContext {
  /**
   * Receipts that arrive outside HTTP (SMPP deliver_sm), with the provider's account (Provider.account):
   * resolves once recorded, or kept durably for a send not known yet, so the provider may acknowledge; rejects
   * when it could be neither, so the provider should have it sent again (SMPP: a temporary error in deliver_sm_resp).
   */
  readonly onReceipt: (provider: string, receipt: DeliveryReceipt, account?: string) => Promise<void>;
  /** `PUBLIC_BASE_URL/callbacks/<name>`, or null when PUBLIC_BASE_URL is unset (the start refuses providers that need it). */
  readonly callbackUrl: string | null;
  /** PROVIDER_TIMEOUT_MS: how long a request to the provider is expected to take (SMPP: bind, enquire_link, unbind). */
  readonly providerTimeoutMs?: number;
  /** The service's clock (a message's time to live, a report's freshness); absent: the system's. */
  readonly clock?: Clock;
  /** CALL_RING_SECONDS: the longest a dropped call rings before it is hung up. */
  readonly callRingSeconds: number;
  /** VOICE_PROMPTS_DIR: the operator's recordings of the digits per locale, for providers that play audio (sip). */
  readonly voicePromptsDir?: string | null;
  /** Where the `log` provider keeps what it "sent", so a developer can read codes back. */
  readonly messageLog: MessageLog;
  /** pino-compatible; never give it a code, a secret or a full message text. */
  readonly logger: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
}

/** One setting of a provider module, read from the environment like every other setting (src/config.ts). */
export interface ProviderSetting<T> {
  /** What it means, for the provider's settings table in docs/. */
  readonly doc: string;
  /** The value when unset, as the operator would write it; undefined: none. */
  readonly default: string | undefined;
  /** Must be set when the provider is configured (the start names every missing one). */
  readonly required: boolean;
  /**
   * With `required` false: must be set when the provider is named for one of these channels (a provider of several
   * channels whose settings only one of them uses, e.g. Vonage's voice application, Twilio's WhatsApp sender).
   */
  readonly requiredFor?: readonly Channel[];
  /** A credential: never printed, never logged. */
  readonly secret?: boolean;
  /** Throws an Error whose message says what is wrong with `raw`. */
  readonly parse: (raw: string) => T;
}

export type ProviderSettings = Readonly<Record<string, ProviderSetting<unknown>>>;

/** The parsed values of a module's settings (undefined where unset and without a default). */
export type SettingValues<S extends ProviderSettings> = {
  readonly [K in keyof S]:
    | ReturnType<S[K]['parse']>
    | (S[K]['default'] extends string ? never : S[K]['required'] extends true ? never : undefined);
};

/** A provider module: one file under src/providers/, one line in the registry. */
export interface ProviderModule<S extends ProviderSettings = ProviderSettings> {
  readonly name: string;
  readonly channels: readonly Channel[];
  /** Its settings, each named with the provider's name in capitals first (TWILIO_ACCOUNT_SID). */
  readonly settings: S;
  /** True when it sends HTTP delivery callbacks: PUBLIC_BASE_URL must then be set. */
  readonly callbacks: boolean;
  create(values: SettingValues<S>, context: ProviderContext): Provider;
}

/** One SMS or call as the `log` provider keeps it. */
export interface LoggedMessage {
  readonly verificationId: string;
  readonly channel: Channel;
  readonly recipient: string;
  readonly sender: string;
  readonly body: string;
}

/** Storage of what the `log` provider sent (port). */
export interface MessageLog {
  record(entry: LoggedMessage): Promise<void>;
}
