import type { ProviderContext, ProviderModule, SettingValues } from '../channels/provider-port.js';
import type { LinkTiming } from './smpp/link.js';
import { SmppProvider } from './smpp/provider.js';
import { smppSettings } from './smpp/settings.js';

/** Timings a real SMSC is given; tests pass shorter ones to createSmppProvider. */
export interface SmppTuning extends Omit<LinkTiming, 'enquireLinkMs'> {
  readonly stopGraceMs: number;
}

export const defaultSmppTuning: SmppTuning = {
  backoffInitialMs: 1_000,
  backoffMaxMs: 60_000,
  stableBindMs: 30_000,
  responseTimeoutMs: 30_000,
  unbindTimeoutMs: 2_000,
  stopGraceMs: 10_000,
  random: Math.random,
};

/** The smpp provider with its timings given; `create` uses the defaults. */
export function createSmppProvider(
  values: SettingValues<typeof smppSettings>,
  context: ProviderContext,
  tuning: Partial<SmppTuning> = {},
): SmppProvider {
  const { stopGraceMs, ...timing } = { ...defaultSmppTuning, ...tuning };
  // Required, so the start has refused to go on without it; SettingValues still types it as possibly unset.
  if (!values.SMPP_URL) throw new Error('SMPP_URL is not set');
  return new SmppProvider(
    {
      endpoint: values.SMPP_URL,
      window: values.SMPP_WINDOW,
      systemType: values.SMPP_SYSTEM_TYPE,
      timing: { ...timing, enquireLinkMs: values.SMPP_ENQUIRE_LINK_SECONDS * 1000 },
      stopGraceMs,
    },
    context,
  );
}

/**
 * SMPP 3.4 to an SMSC: one transceiver bind, submit_sm with a delivery receipt asked for, receipts back as
 * deliver_sm (CONTRACT.md section 8).
 */
export const smppProvider: ProviderModule<typeof smppSettings> = {
  name: 'smpp',
  channels: ['sms'],
  settings: smppSettings,
  callbacks: false,
  // Its own requests (bind, enquire_link, unbind) wait PROVIDER_TIMEOUT_MS; a submit_sm as long as the send worker.
  create: (values, context) => createSmppProvider(values, context, context.providerTimeoutMs === undefined ? {} : { responseTimeoutMs: context.providerTimeoutMs }),
};
