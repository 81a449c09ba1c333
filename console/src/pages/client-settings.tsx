import { useState } from 'preact/hooks';
import { data, messageOf } from '../api.js';
import type { ClientDetailView, Settings } from './client-view.js';

/** Empty is "none", as the CLI's `none`. */
const orNull = (text: string): string | null => text.trim() || null;
/** "WHATSAPP, send_sms" as the CLI's --fallback takes it: request types in order, upper case. */
const typesOf = (text: string): string[] => text.split(',').map((t) => t.trim().toUpperCase()).filter(Boolean);

/** A field that is not a number is sent as it was typed, so that the command refuses it in its own words. */
const numberOrText = (text: string): number | string => (Number.isFinite(Number(text)) ? Number(text) : text);

/**
 * Every setting `clients update` takes, saved at once through it (PATCH .../settings): what it refuses is shown
 * with its own message, and nothing is saved.
 */
export function SettingsForm({ client, onSaved }: { client: ClientDetailView; onSaved: (s: Settings) => void }) {
  const s = client.settings;
  const [appName, setAppName] = useState(s.appName ?? '');
  const [webhook, setWebhook] = useState(s.defaultWebhookUrl ?? '');
  const [countries, setCountries] = useState(s.allowedCountries?.join(',') ?? '');
  const [reveal, setReveal] = useState(s.revealCode);
  const [locale, setLocale] = useState(s.defaultLocale ?? '');
  const [webotp, setWebotp] = useState(s.webotpDomain ?? '');
  const [appHash, setAppHash] = useState(s.androidAppHash ?? '');
  const [fallback, setFallback] = useState(s.fallback.join(', '));
  const [after, setAfter] = useState(s.fallbackAfterSeconds === null ? '' : String(s.fallbackAfterSeconds));
  const [provider, setProvider] = useState(s.captcha?.provider ?? 'none');
  const [secret, setSecret] = useState('');
  const [minScore, setMinScore] = useState(String(s.captcha?.minScore ?? 0.5));
  const [when, setWhen] = useState(s.captcha?.when ?? 'always');
  const [daily, setDaily] = useState(s.budget.daily ?? '');
  const [monthly, setMonthly] = useState(s.budget.monthly ?? '');
  const [state, setState] = useState<{ ok: boolean; text: string } | null>(null);
  const save = async (e: Event) => {
    e.preventDefault();
    setState(null);
    const score = minScore.trim() === '' ? undefined : numberOrText(minScore);
    const captcha = provider === 'none' ? { provider: 'none' } : { provider, when, ...(secret !== '' && { secret }), ...(score !== undefined && { minScore: score }) };
    try {
      const saved = await data<Settings>('PATCH', `/clients/${client.clientId}/settings`, {
        appName: orNull(appName),
        defaultWebhookUrl: orNull(webhook),
        allowedCountries: countries.trim() ? countries.split(',').map((c) => c.trim()).filter(Boolean) : null,
        revealCode: reveal,
        defaultLocale: orNull(locale),
        webotpDomain: orNull(webotp),
        androidAppHash: orNull(appHash),
        fallback: typesOf(fallback),
        fallbackAfterSeconds: after.trim() === '' ? null : numberOrText(after),
        dailySpendLimit: orNull(daily),
        monthlySpendLimit: orNull(monthly),
        // Left out when unchanged from none, so a client without CAPTCHA is not asked for a secret.
        ...((provider !== 'none' || s.captcha !== null) && { captcha }),
      });
      onSaved(saved);
      setSecret('');
      setState({ ok: true, text: 'Settings saved.' });
    } catch (err) {
      setState({ ok: false, text: messageOf(err) });
    }
  };
  const described = state && !state.ok ? { 'aria-describedby': 'settings-problem' } : {};
  return (
    <form onSubmit={save} aria-labelledby="settings-title" {...described}>
      <h2 id="settings-title">Settings</h2>
      <label for="app-name">App name ({'{app}'} in texts)</label>
      <input id="app-name" value={appName} onInput={(e) => setAppName(e.currentTarget.value)} />
      <label for="default-webhook">Default webhook URL</label>
      <input id="default-webhook" type="url" value={webhook} onInput={(e) => setWebhook(e.currentTarget.value)} />
      <label for="countries">Allowed countries (ISO codes, comma-separated; empty: all)</label>
      <input id="countries" value={countries} onInput={(e) => setCountries(e.currentTarget.value)} />
      <label class="check"><input type="checkbox" checked={reveal} onChange={(e) => setReveal(e.currentTarget.checked)} /> Reveal the code in answers and webhooks</label>
      <label for="default-locale">Default locale (BCP 47, e.g. fr or pt-BR; empty: none)</label>
      <input id="default-locale" value={locale} onInput={(e) => setLocale(e.currentTarget.value)} />
      <label for="webotp-domain">WebOTP domain (adds "@domain #code" as the last line; empty: none)</label>
      <input id="webotp-domain" value={webotp} onInput={(e) => setWebotp(e.currentTarget.value)} />
      <label for="android-app-hash">Android app hash (SMS Retriever, 11 characters; empty: none)</label>
      <input id="android-app-hash" value={appHash} onInput={(e) => setAppHash(e.currentTarget.value)} />
      <fieldset>
        <legend>Default workflow</legend>
        <label for="fallback">Then, in order (request types, comma-separated, e.g. WHATSAPP, SEND_SMS; empty: none)</label>
        <input id="fallback" value={fallback} onInput={(e) => setFallback(e.currentTarget.value)} />
        <label for="fallback-after">Next step after this many seconds without a verify (empty: the service's)</label>
        <input id="fallback-after" inputMode="numeric" value={after} onInput={(e) => setAfter(e.currentTarget.value)} />
      </fieldset>
      <fieldset>
        <legend>CAPTCHA</legend>
        <label for="captcha-provider">Provider</label>
        <select id="captcha-provider" value={provider} onChange={(e) => setProvider(e.currentTarget.value)}>
          <option value="none">none</option>
          <option value="turnstile">turnstile</option>
          <option value="hcaptcha">hcaptcha</option>
          <option value="recaptcha">recaptcha</option>
        </select>
        <label for="captcha-secret">Secret key {s.captcha ? `(now ${s.captcha.secret}; empty: kept)` : ''}</label>
        <input id="captcha-secret" type="password" autoComplete="off" value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />
        <label for="captcha-min-score">Minimum score (0 to 1, where the answer has one)</label>
        <input id="captcha-min-score" inputMode="decimal" value={minScore} onInput={(e) => setMinScore(e.currentTarget.value)} />
        <label for="captcha-when">Ask for a token</label>
        <select id="captcha-when" value={when} onChange={(e) => setWhen(e.currentTarget.value)}>
          <option value="always">always</option>
          <option value="throttled">only of a create a throttle would refuse</option>
        </select>
      </fieldset>
      <fieldset>
        <legend>Budget (in the service's cost currency)</legend>
        <label for="daily-spend-limit">Most its codes may cost in a UTC day (e.g. 25.00; empty: no limit)</label>
        <input id="daily-spend-limit" inputMode="decimal" value={daily} onInput={(e) => setDaily(e.currentTarget.value)} />
        <label for="monthly-spend-limit">Most its codes may cost in a UTC month (empty: no limit)</label>
        <input id="monthly-spend-limit" inputMode="decimal" value={monthly} onInput={(e) => setMonthly(e.currentTarget.value)} />
      </fieldset>
      <button type="submit">Save settings</button>
      {state && (state.ok ? <p role="status" id="settings-state">{state.text}</p> : <p role="alert" class="error" id="settings-problem">Not saved: {state.text}</p>)}
    </form>
  );
}
