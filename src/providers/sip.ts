import type { ProviderContext, ProviderModule, SettingValues } from '../channels/provider-port.js';
import { SipProvider, type SipOptions } from './sip/provider.js';
import { voiceIntroduction } from '../domain/spoken-code.js';
import { sipSettings } from './sip/settings.js';
import { SpokenPrompts } from './sip/speech.js';

/** Timings a real trunk is given; tests and the bench pass shorter ones to createSipProvider. */
export type SipTuning = Pick<SipOptions, 'lingerMs' | 'stopGraceMs' | 'connectTimeoutMs'> & Partial<Pick<SipOptions, 'onFirstPacket'>>;

export const defaultSipTuning: SipTuning = {
  // 64*T1 (RFC 3261 Timer B/F/D): after it no answer to a call's requests is still expected.
  lingerMs: 32_000,
  stopGraceMs: 10_000,
  connectTimeoutMs: 5_000,
};

/** The sip provider with its timings given; `create` uses the defaults. */
export function createSipProvider(
  values: SettingValues<typeof sipSettings>,
  context: ProviderContext,
  tuning: Partial<SipTuning> = {},
): SipProvider {
  // Required, so the start has refused to go on without it; SettingValues still types it as possibly unset.
  const trunk = values.SIP_TRUNK_URI;
  if (!trunk) throw new Error('SIP_TRUNK_URI is not set');
  const { SIP_USERNAME: username, SIP_PASSWORD: password } = values;
  if ((username === undefined) !== (password === undefined)) {
    throw new Error('SIP_USERNAME and SIP_PASSWORD go together: set both for digest authentication, or neither');
  }
  return new SipProvider(
    {
      trunk,
      credentials: username !== undefined && password !== undefined ? { username, password } : null,
      localAddress: values.SIP_LOCAL_ADDRESS,
      localPort: values.SIP_LOCAL_PORT,
      fromHost: values.SIP_FROM_HOST ?? trunk.host,
      numberFormat: values.SIP_NUMBER_FORMAT,
      ringMs: context.callRingSeconds * 1000,
      prompts: new SpokenPrompts(context.voicePromptsDir ?? null, voiceIntroduction),
      ...defaultSipTuning,
      ...tuning,
    },
    context,
  );
}

/**
 * Calls through a SIP trunk. Dropped calls (CONTRACT.md section 8): an INVITE from the caller id, CANCEL as soon as
 * it rings (180/183), BYE at once if answered, the final answer mapped to delivered, transient or permanent. Voice
 * calls (section 13): an INVITE from VOICE_CALLER_NUMBER with an RTP port in its offer; answered, the code is
 * played as G.711 audio and the call ended with BYE; not answered within CALL_RING_SECONDS, CANCEL.
 */
export const sipProvider: ProviderModule<typeof sipSettings> = {
  name: 'sip',
  channels: ['call', 'voice'],
  settings: sipSettings,
  callbacks: false,
  create: (values, context) => createSipProvider(values, context),
};
