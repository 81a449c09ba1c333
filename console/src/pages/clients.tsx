import { useEffect, useState } from 'preact/hooks';
import { data, messageOf } from '../api.js';
import { navigate, onLinkClick } from '../router.js';

interface ClientRow {
  readonly clientId: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly disabledAt: string | null;
  readonly createdAt: string;
}

const scopes = ['otp:send', 'otp:verify', 'lookup:request', 'lookup:status', 'deposit:request', 'one-time-password-sms:send-validate'];

/** Secrets shown once after a create or a rotation. */
export function Secrets({ values }: { values: Record<string, string> }) {
  return (
    <div role="status" class="secrets">
      <p><strong>Store these now: they are not shown again.</strong></p>
      <dl>
        {Object.entries(values).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd><code data-secret={k}>{v}</code></dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

export function Clients() {
  const [clients, setClients] = useState<ClientRow[] | null>(null);
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<string[]>(['otp:send', 'otp:verify']);
  const [made, setMade] = useState<Record<string, string> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () => data<ClientRow[]>('GET', '/clients').then(setClients, (e) => setError(messageOf(e)));
  useEffect(() => void load(), []);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const c = await data<{ clientId: string; clientSecret: string; webhookSecret: string }>('POST', '/clients', { name, scopes: chosen });
      setMade({ clientId: c.clientId, clientSecret: c.clientSecret, webhookSecret: c.webhookSecret });
      setName('');
      await load();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section>
      <h1 tabIndex={-1}>Clients</h1>
      <table id="clients">
        <caption>Every client</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Scopes</th><th scope="col">State</th><th scope="col">Created</th></tr></thead>
        <tbody>
          {clients?.map((c) => (
            <tr key={c.clientId} data-client-id={c.clientId}>
              <th scope="row"><a href={`/console/clients/${c.clientId}`} onClick={onLinkClick}>{c.name}</a></th>
              <td><code>{c.clientId}</code></td>
              <td>{c.scopes.join(' ')}</td>
              <td>{c.disabledAt ? `disabled ${c.disabledAt}` : 'active'}</td>
              <td>{c.createdAt}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Create a client</h2>
      <form onSubmit={create}>
        <label for="client-name">Name</label>
        <input id="client-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <fieldset>
          <legend>Scopes</legend>
          {scopes.map((s) => (
            <label key={s} class="check">
              <input type="checkbox" checked={chosen.includes(s)} onChange={(e) => setChosen(e.currentTarget.checked ? [...chosen, s] : chosen.filter((x) => x !== s))} /> {s}
            </label>
          ))}
        </fieldset>
        <button type="submit">Create client</button>
      </form>
      {made && (
        <>
          <Secrets values={made} />
          <p><a href={`/console/clients/${made.clientId}`} onClick={(e) => { e.preventDefault(); navigate(`/console/clients/${made.clientId}`); }}>Open the new client</a></p>
        </>
      )}
      {error && <p role="alert" class="error">{error}</p>}
    </section>
  );
}
