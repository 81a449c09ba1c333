import { useEffect, useState } from 'preact/hooks';
import { data, messageOf } from '../api.js';
import { onLinkClick } from '../router.js';

interface Passkey {
  readonly id: string;
  readonly createdAt: string;
  readonly transports: readonly string[];
}
interface Account {
  readonly id: string;
  readonly email: string;
  readonly hasPassword: boolean;
  readonly passkeys: readonly Passkey[];
}

function PasswordForm() {
  const [current, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [state, setState] = useState<{ ok: boolean; text: string } | null>(null);
  const change = async (e: Event) => {
    e.preventDefault();
    setState(null);
    if (password !== again) {
      setState({ ok: false, text: 'The two new passwords differ.' });
      return;
    }
    try {
      await data('POST', '/account/password', { current, password });
      setCurrent('');
      setPassword('');
      setAgain('');
      setState({ ok: true, text: 'Password changed: your other sessions have ended.' });
    } catch (err) {
      setState({ ok: false, text: `Not changed: ${messageOf(err)}` });
    }
  };
  return (
    <form onSubmit={change} aria-labelledby="password-title" class="narrow">
      <h2 id="password-title">Change your password</h2>
      <label for="current-password">Current password</label>
      <input id="current-password" type="password" autoComplete="current-password" required value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />
      <label for="changed-password">New password (12 to 200 characters)</label>
      <input id="changed-password" type="password" autoComplete="new-password" minLength={12} required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
      <label for="changed-password-again">The new password again</label>
      <input id="changed-password-again" type="password" autoComplete="new-password" minLength={12} required value={again} onInput={(e) => setAgain(e.currentTarget.value)} />
      <button type="submit">Change password</button>
      {state && (state.ok ? <p role="status" id="password-state">{state.text}</p> : <p role="alert" class="error" id="password-problem">{state.text}</p>)}
    </form>
  );
}

/** The signed-in operator's own account: their password and their passkeys. Operators are made in the CLI. */
export function AccountPage() {
  const [account, setAccount] = useState<Account | null>(null);
  const [state, setState] = useState<string | null>(null);
  useEffect(() => void data<Account>('GET', '/account').then(setAccount, (e) => setState(messageOf(e))), []);
  const remove = async (p: Passkey) => {
    if (!confirm('Remove this passkey? It will not sign you in any more.')) return;
    try {
      const left = await data<{ passkeys: Passkey[] }>('DELETE', `/account/passkeys/${encodeURIComponent(p.id)}`);
      if (account) setAccount({ ...account, passkeys: left.passkeys });
      setState('Passkey removed.');
    } catch (err) {
      setState(`Not removed: ${messageOf(err)}`);
    }
  };
  return (
    <section>
      <h1 tabIndex={-1}>Your account</h1>
      {account && <p>Signed in as <strong>{account.email}</strong>.</p>}
      <PasswordForm />
      <h2 id="passkeys-title">Your passkeys</h2>
      {state && <p role="status" id="passkeys-state">{state}</p>}
      {account && account.passkeys.length === 0 && <p id="no-passkeys">No passkey: you sign in with your password.</p>}
      {account && account.passkeys.length > 0 && (
        <table id="passkeys" aria-labelledby="passkeys-title">
          <thead><tr><th scope="col">Passkey</th><th scope="col">Added</th><th scope="col">Reached by</th><th scope="col">Remove</th></tr></thead>
          <tbody>
            {account.passkeys.map((p, i) => (
              <tr key={p.id} data-passkey={p.id}>
                <th scope="row"><code>{p.id.slice(0, 12)}…</code></th>
                <td>{p.createdAt}</td>
                <td>{p.transports.join(', ') || '-'}</td>
                <td><button type="button" class="danger" onClick={() => void remove(p)} aria-label={`Remove passkey ${i + 1}, added ${p.createdAt}`}>Remove</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p><a href="/console/passkey" onClick={onLinkClick}>Add a passkey</a></p>
    </section>
  );
}
