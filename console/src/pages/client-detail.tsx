import { useEffect, useState } from 'preact/hooks';
import { data, messageOf } from '../api.js';
import { Secrets } from './clients.js';

interface Settings {
  readonly appName: string | null;
  readonly defaultWebhookUrl: string | null;
  readonly revealCode: boolean;
  readonly allowedCountries: readonly string[] | null;
  readonly defaultLocale: string | null;
  readonly templates: Readonly<Record<string, string>>;
  readonly testNumbers: Readonly<Record<string, string>>;
}
interface ClientDetailView {
  readonly clientId: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly disabledAt: string | null;
  readonly createdAt: string;
  readonly settings: Settings;
}
interface Preview {
  readonly locale: string;
  readonly encoding: string;
  readonly parts: number;
  readonly sample: string;
}

function SettingsForm({ client, onSaved }: { client: ClientDetailView; onSaved: (s: Settings) => void }) {
  const s = client.settings;
  const [appName, setAppName] = useState(s.appName ?? '');
  const [webhook, setWebhook] = useState(s.defaultWebhookUrl ?? '');
  const [countries, setCountries] = useState(s.allowedCountries?.join(',') ?? '');
  const [reveal, setReveal] = useState(s.revealCode);
  const [state, setState] = useState<string | null>(null);
  const save = async (e: Event) => {
    e.preventDefault();
    try {
      const saved = await data<Settings>('PATCH', `/clients/${client.clientId}/settings`, {
        appName: appName.trim() || null,
        defaultWebhookUrl: webhook.trim() || null,
        allowedCountries: countries.trim() ? countries.split(',').map((c) => c.trim()).filter(Boolean) : null,
        revealCode: reveal,
      });
      onSaved(saved);
      setState('Settings saved.');
    } catch (err) {
      setState(`Not saved: ${messageOf(err)}`);
    }
  };
  return (
    <form onSubmit={save} aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <label for="app-name">App name ({'{app}'} in texts)</label>
      <input id="app-name" value={appName} onInput={(e) => setAppName(e.currentTarget.value)} />
      <label for="default-webhook">Default webhook URL</label>
      <input id="default-webhook" type="url" value={webhook} onInput={(e) => setWebhook(e.currentTarget.value)} />
      <label for="countries">Allowed countries (ISO codes, comma-separated; empty: all)</label>
      <input id="countries" value={countries} onInput={(e) => setCountries(e.currentTarget.value)} />
      <label class="check"><input type="checkbox" checked={reveal} onChange={(e) => setReveal(e.currentTarget.checked)} /> Reveal the code in answers and webhooks</label>
      <button type="submit">Save settings</button>
      {state && <p role="status">{state}</p>}
    </form>
  );
}

function Templates({ client, onSaved }: { client: ClientDetailView; onSaved: (s: Settings) => void }) {
  const [locale, setLocale] = useState('en');
  const [text, setText] = useState(client.settings.templates.en ?? '{code} is your {app} code. It expires in {minutes} minutes.');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [state, setState] = useState<string | null>(null);
  // The live preview: the same check as saving, a moment after the last key press.
  useEffect(() => {
    const timer = setTimeout(() => {
      data<Preview>('POST', `/clients/${client.clientId}/templates/preview`, { locale, template: text }).then(
        (p) => {
          setPreview(p);
          setProblem(null);
        },
        (err) => {
          setPreview(null);
          setProblem(messageOf(err));
        },
      );
    }, 250);
    return () => clearTimeout(timer);
  }, [locale, text]);
  const save = async (e: Event) => {
    e.preventDefault();
    try {
      await data('PUT', `/clients/${client.clientId}/templates/${encodeURIComponent(locale)}`, { template: text });
      onSaved((await data<ClientDetailView>('GET', `/clients/${client.clientId}`)).settings);
      setState(`Template ${locale} saved: the next SMS in ${locale} uses it.`);
    } catch (err) {
      setState(`Not saved: ${messageOf(err)}`);
    }
  };
  const remove = async (l: string) => {
    try {
      onSaved(await data<Settings>('DELETE', `/clients/${client.clientId}/templates/${encodeURIComponent(l)}`));
      setState(`Template ${l} removed.`);
    } catch (err) {
      setState(`Not removed: ${messageOf(err)}`);
    }
  };
  const templates = Object.entries(client.settings.templates);
  return (
    <section aria-labelledby="templates-title">
      <h2 id="templates-title">SMS templates</h2>
      {templates.length === 0 ? (
        <p>No templates: texts are the English default.</p>
      ) : (
        <table id="templates">
          <caption>Saved templates</caption>
          <thead><tr><th scope="col">Locale</th><th scope="col">Text</th><th scope="col">Remove</th></tr></thead>
          <tbody>
            {templates.map(([l, t]) => (
              <tr key={l}><th scope="row">{l}</th><td>{t}</td><td><button type="button" onClick={() => void remove(l)} aria-label={`Remove the ${l} template`}>Remove</button></td></tr>
            ))}
          </tbody>
        </table>
      )}
      <form onSubmit={save}>
        <label for="template-locale">Locale (BCP 47)</label>
        <input id="template-locale" value={locale} onInput={(e) => setLocale(e.currentTarget.value)} />
        <label for="template-text">Text, with {'{code}'}, {'{minutes}'} and {'{app}'}</label>
        <textarea id="template-text" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <div class="preview" aria-live="polite" id="template-preview">
          {preview && (
            <>
              <p><span id="preview-encoding">{preview.encoding}</span>, <span id="preview-parts">{preview.parts}</span> SMS part(s) at most. A user reads:</p>
              <pre id="preview-sample">{preview.sample}</pre>
            </>
          )}
          {problem && <p class="error" id="preview-problem">{problem}</p>}
        </div>
        <button type="submit">Save template</button>
      </form>
      {state && <p role="status" id="template-state">{state}</p>}
    </section>
  );
}

function TestNumbers({ client, onSaved }: { client: ClientDetailView; onSaved: (s: Settings) => void }) {
  const [number, setNumber] = useState('');
  const [code, setCode] = useState('');
  const [state, setState] = useState<string | null>(null);
  const add = async (e: Event) => {
    e.preventDefault();
    try {
      onSaved(await data<Settings>('POST', `/clients/${client.clientId}/test-numbers`, { number, code }));
      setNumber('');
      setCode('');
      setState('Test number saved.');
    } catch (err) {
      setState(`Not saved: ${messageOf(err)}`);
    }
  };
  const remove = async (n: string) => {
    try {
      onSaved(await data<Settings>('DELETE', `/clients/${client.clientId}/test-numbers/${encodeURIComponent(n)}`));
    } catch (err) {
      setState(`Not removed: ${messageOf(err)}`);
    }
  };
  const numbers = Object.entries(client.settings.testNumbers);
  return (
    <section aria-labelledby="test-numbers-title">
      <h2 id="test-numbers-title">Test numbers</h2>
      {numbers.length === 0 ? <p>No test numbers.</p> : (
        <ul>{numbers.map(([n, c]) => (<li key={n}>{n}: code {c} <button type="button" onClick={() => void remove(n)} aria-label={`Remove test number ${n}`}>Remove</button></li>))}</ul>
      )}
      <form onSubmit={add}>
        <label for="test-number">Number (E.164)</label>
        <input id="test-number" required value={number} onInput={(e) => setNumber(e.currentTarget.value)} />
        <label for="test-code">Its fixed code</label>
        <input id="test-code" required inputMode="numeric" value={code} onInput={(e) => setCode(e.currentTarget.value)} />
        <button type="submit">Add test number</button>
      </form>
      {state && <p role="status">{state}</p>}
    </section>
  );
}

export function ClientDetail({ id }: { id: string }) {
  const [client, setClient] = useState<ClientDetailView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [secrets, setSecrets] = useState<Record<string, string> | null>(null);
  const [hooks, setHooks] = useState<Record<string, string> | null>(null);
  const load = () => data<ClientDetailView>('GET', `/clients/${id}`).then(setClient, (e) => setError(messageOf(e)));
  useEffect(() => void load(), [id]);
  const onSaved = (settings: Settings) => client && setClient({ ...client, settings });
  const act = async (action: 'disable' | 'rotate-secret' | 'rotate-webhook-secret' | 'hooks', confirmText: string | null) => {
    if (confirmText && !confirm(confirmText)) return;
    setError(null);
    try {
      const v = await data<Record<string, unknown>>('POST', `/clients/${id}/${action}`, {});
      if (action === 'rotate-secret') setSecrets({ clientSecret: String(v.clientSecret) });
      if (action === 'rotate-webhook-secret') setSecrets({ webhookSecret: String(v.webhookSecret) });
      if (action === 'hooks') setHooks(Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'string' ? x : JSON.stringify(x)])));
      await load();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  if (!client) return (<><h1 tabIndex={-1}>Client</h1>{error ? <p role="alert" class="error">{error}</p> : <p>Loading…</p>}</>);
  return (
    <>
      <h1 tabIndex={-1}>Client {client.name}</h1>
      <dl>
        <dt>Id</dt><dd><code>{client.clientId}</code></dd>
        <dt>Scopes</dt><dd>{client.scopes.join(' ')}</dd>
        <dt>State</dt><dd id="client-state">{client.disabledAt ? `disabled ${client.disabledAt}` : 'active'}</dd>
      </dl>
      <div class="actions">
        <button type="button" onClick={() => void act('rotate-secret', 'Rotate the client secret? The old one stops working at once.')}>Rotate secret</button>
        <button type="button" onClick={() => void act('rotate-webhook-secret', null)}>Rotate webhook secret</button>
        <button type="button" onClick={() => void act('hooks', null)}>Relay hooks</button>
        <button type="button" class="danger" disabled={client.disabledAt !== null} onClick={() => void act('disable', 'Disable this client? Its tokens stop working.')}>Disable client</button>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {secrets && <Secrets values={secrets} />}
      {hooks && (
        <dl class="hooks">{Object.entries(hooks).map(([k, v]) => (<div key={k}><dt>{k}</dt><dd><code>{v}</code></dd></div>))}</dl>
      )}
      <SettingsForm client={client} onSaved={onSaved} />
      <Templates client={client} onSaved={onSaved} />
      <TestNumbers client={client} onSaved={onSaved} />
    </>
  );
}
