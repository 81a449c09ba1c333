import type { Channel } from '../domain/channel-driver.js';
import type { Provider, ProviderContext, ProviderModule } from '../channels/provider-port.js';
import { africastalkingSms } from './africastalking-sms.js';
import { httpGateway } from './http-gateway.js';
import { infobipSms } from './infobip-sms.js';
import { logProvider } from './log.js';
import { sipProvider } from './sip.js';
import { smppProvider } from './smpp.js';
import { termiiSms } from './termii-sms.js';
import { twilio } from './twilio.js';
import { twilioVerify } from './twilio-verify.js';
import { vonage } from './vonage.js';
import { vonageVerify } from './vonage-verify.js';
import { camaraNumberVerification } from './silent/camara.js';
import { firebasePnv } from './silent/firebase.js';
import { telegramGateway } from './telegram/gateway.js';
import { metaWhatsApp } from './whatsapp/meta.js';

/** Every provider the service knows, by the name SMS_PROVIDER, CALL_PROVIDER, WHATSAPP_PROVIDER, VOICE_PROVIDER, TELEGRAM_PROVIDER and SILENT_PROVIDER use: one line each. */
export const providerModules: readonly ProviderModule[] = [
  logProvider,
  twilio,
  vonage,
  infobipSms,
  africastalkingSms,
  termiiSms,
  smppProvider,
  httpGateway,
  sipProvider,
  metaWhatsApp,
  telegramGateway,
  firebasePnv,
  camaraNumberVerification,
  twilioVerify,
  vonageVerify,
];

export function providerModule(name: string): ProviderModule | undefined {
  return providerModules.find((m) => m.name === name);
}

/** A configured provider: its module and its parsed settings. */
export interface ConfiguredProvider {
  readonly module: ProviderModule;
  readonly values: Readonly<Record<string, unknown>>;
}

/** The providers of each channel, in failover order, with a start and a stop for all of them. */
export class Providers {
  private readonly byChannel: ReadonlyMap<Channel, readonly Provider[]>;
  private readonly all: readonly Provider[];

  constructor(configured: Readonly<Record<Channel, readonly ConfiguredProvider[]>>, contextFor: (name: string) => ProviderContext) {
    // A provider named for both channels is one instance (one connection, one callback route).
    const instances = new Map<string, Provider>();
    const instance = ({ module, values }: ConfiguredProvider): Provider => {
      const existing = instances.get(module.name);
      if (existing) return existing;
      const created = module.create(values, contextFor(module.name));
      instances.set(module.name, created);
      return created;
    };
    this.byChannel = new Map(
      (Object.entries(configured) as [Channel, readonly ConfiguredProvider[]][]).map(([channel, list]) => [channel, list.map(instance)]),
    );
    this.all = [...instances.values()];
  }

  /** A channel's providers, first choice first. */
  forChannel(channel: Channel): readonly Provider[] {
    return this.byChannel.get(channel) ?? [];
  }

  /** The provider of that name, for its callbacks. */
  named(name: string): Provider | undefined {
    return this.all.find((p) => p.name === name);
  }

  async start(): Promise<void> {
    await Promise.all(this.all.map((p) => p.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.all.map((p) => p.stop()));
  }
}
