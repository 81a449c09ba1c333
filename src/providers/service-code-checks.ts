import type { Provider } from '../channels/provider-port.js';
import type { ServiceCodeChecks } from '../domain/service-code.js';

/**
 * The domain's ServiceCodeChecks over the configured providers: the verify service that made a send checks a code
 * within PROVIDER_TIMEOUT_MS, never longer (a verify waits for it, holding no row). A provider this process does
 * not have (another instance's settings) cannot be asked: unavailable, so that nothing is counted.
 */
export function serviceCodeChecks(provider: (name: string) => Provider | undefined, timeoutMs: number): ServiceCodeChecks {
  return {
    async check(send, code) {
      const checker = provider(send.provider);
      if (!checker?.checkCode) return { kind: 'unavailable', reason: `${send.provider} is not configured here` };
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        return await checker.checkCode(send, code, signal);
      } catch (err) {
        return { kind: 'unavailable', reason: `${send.provider} threw: ${err instanceof Error ? err.message : String(err)}` };
      }
    },
  };
}
