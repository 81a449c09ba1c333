import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { data, messageOf } from '../api.js';
import { Secrets } from './clients.js';
import { SettingsForm } from './client-settings.js';
import { Templates } from './client-templates.js';
import type { ClientDetailView, Settings } from './client-view.js';

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

type Hooks = Record<string, string>;
const hooksView = (v: Record<string, unknown>): Hooks => Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'string' ? x : JSON.stringify(x)]));

/**
 * The signing key ZITADEL shows once when its HTTP SMS provider is added (ZITADEL makes it): kept to check its
 * ZITADEL-Signature with, never shown back; a new one replaces the old.
 */
function ZitadelKey({ clientId, onKept }: { clientId: string; onKept: (hooks: Hooks) => void }) {
  const [key, setKey] = useState('');
  const [state, setState] = useState<string | null>(null);
  const keep = async (e: Event) => {
    e.preventDefault();
    try {
      onKept(hooksView(await data<Record<string, unknown>>('POST', `/clients/${clientId}/hooks`, { zitadelSigningKey: key.trim() })));
      setKey('');
      setState('Signing key kept: ZITADEL\'s requests signed with it are taken.');
    } catch (err) {
      setState(`Not kept: ${messageOf(err)}`);
    }
  };
  return (
    <form onSubmit={keep} aria-labelledby="zitadel-title">
      <h2 id="zitadel-title">ZITADEL signing key</h2>
      <label for="zitadel-key">The signing key ZITADEL showed when its HTTP SMS provider was added (write-only)</label>
      <input id="zitadel-key" type="password" autocomplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
      <button type="submit">Keep the signing key</button>
      {state && <p role="status" id="zitadel-state">{state}</p>}
    </form>
  );
}

/**
 * The client's relays, as `clients hooks` shows them: off until turned on (which makes the hook secret); the
 * secret rotated (the old one taken 24 h more) or every relay turned off at once.
 */
function RelayHooks({ clientId, hooks, onChange }: { clientId: string; hooks: Hooks; onChange: (hooks: Hooks) => void }) {
  const [error, setError] = useState<string | null>(null);
  const change = async (path: 'hooks' | 'rotate-hook-secret', body: Record<string, unknown>, confirmText: string | null) => {
    if (confirmText && !confirm(confirmText)) return;
    setError(null);
    try {
      onChange(hooksView(await data<Record<string, unknown>>('POST', `/clients/${clientId}/${path}`, body)));
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const on = hooks.hookSecret !== 'null';
  return (
    <section aria-labelledby="relays-title">
      <h2 id="relays-title">Relay hooks</h2>
      <p id="relays-state">{on ? 'Relays are on.' : 'Relays are off: no auth server can send through this client until they are turned on.'}</p>
      <dl class="hooks">{Object.entries(hooks).map(([k, v]) => (<div key={k} data-hook={k}><dt>{k}</dt><dd><code>{v}</code></dd></div>))}</dl>
      <div class="actions">
        {!on && <button type="button" onClick={() => void change('hooks', { enable: true }, null)}>Turn relays on</button>}
        {on && <button type="button" onClick={() => void change('rotate-hook-secret', {}, null)}>Rotate hook secret</button>}
        {(on || hooks.zitadelSigningKeySet === 'true') && (
          <button type="button" class="danger" onClick={() => void change('hooks', { disable: true }, 'Turn every relay of this client off? The hook secret and ZITADEL\'s key are forgotten.')}>
            Turn relays off
          </button>
        )}
        {hooks.zitadelSigningKeySet === 'true' && (
          <button type="button" onClick={() => void change('hooks', { zitadelSigningKey: null }, 'Forget ZITADEL\'s signing key? Its requests are refused until a new one is kept.')}>
            Forget ZITADEL's key
          </button>
        )}
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      <ZitadelKey clientId={clientId} onKept={onChange} />
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
      if (action === 'hooks') setHooks(hooksView(v));
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
        {client.budgets?.map((b) => (
          <Fragment key={b.period}>
            <dt>Spent {b.period === 'day' ? 'today' : 'this month'}</dt>
            <dd id={`spent-${b.period}`}>{b.spent}{b.limit === null ? ' (no limit)' : ` of ${b.limit}`}</dd>
          </Fragment>
        ))}
      </dl>
      <div class="actions">
        <button type="button" onClick={() => void act('rotate-secret', 'Rotate the client secret? The old one stops working at once.')}>Rotate secret</button>
        <button type="button" onClick={() => void act('rotate-webhook-secret', null)}>Rotate webhook secret</button>
        <button type="button" onClick={() => void act('hooks', null)}>Relay hooks</button>
        <button type="button" class="danger" disabled={client.disabledAt !== null} onClick={() => void act('disable', 'Disable this client? Its tokens stop working.')}>Disable client</button>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {secrets && <Secrets values={secrets} />}
      {hooks && <RelayHooks clientId={client.clientId} hooks={hooks} onChange={setHooks} />}
      <SettingsForm client={client} onSaved={(s) => { onSaved(s); void load(); }} />
      <Templates client={client} onSaved={onSaved} />
      <TestNumbers client={client} onSaved={onSaved} />
    </>
  );
}
