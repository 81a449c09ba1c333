import { useState } from 'preact/hooks';
import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { api, messageOf } from '../api.js';
import { navigate } from '../router.js';

type SignedIn = { operator: { id: string; email: string }; csrfToken: string };

export function SignIn({ onSignedIn }: { onSignedIn: (s: SignedIn) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await api<SignedIn>('POST', '/sign-in', { email, password }));
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const passkey = async () => {
    setError(null);
    try {
      const optionsJSON = await api<Parameters<typeof startAuthentication>[0]['optionsJSON']>('POST', '/passkey-sign-in/options', {});
      const credential = await startAuthentication({ optionsJSON });
      onSignedIn(await api<SignedIn>('POST', '/passkey-sign-in', { credential }));
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section class="narrow">
      <h1 tabIndex={-1}>Sign in to the console</h1>
      <form onSubmit={submit}>
        <label for="email">Email</label>
        <input id="email" type="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <label for="password">Password</label>
        <input id="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
      <p class="or">or</p>
      <button type="button" id="passkey-sign-in" onClick={passkey}>Sign in with a passkey</button>
      {error && <p role="alert" class="error">{error}</p>}
    </section>
  );
}

export function Setup({ onSignedIn }: { onSignedIn: (s: SignedIn) => void }) {
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const token = location.hash.slice(1);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (password !== again) return setError('The two passwords differ');
    try {
      const s = await api<SignedIn>('POST', '/setup', { token, password });
      // The token is used: it leaves the address bar and the history.
      history.replaceState(null, '', '/console/passkey');
      onSignedIn(s);
      navigate('/console/passkey');
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section class="narrow">
      <h1 tabIndex={-1}>Set your password</h1>
      <p>At least 12 characters. You can add a passkey next.</p>
      <form onSubmit={submit}>
        <label for="new-password">New password</label>
        <input id="new-password" type="password" autoComplete="new-password" minLength={12} required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <label for="new-password-again">The same again</label>
        <input id="new-password-again" type="password" autoComplete="new-password" minLength={12} required value={again} onInput={(e) => setAgain(e.currentTarget.value)} />
        <button type="submit">Set password</button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
    </section>
  );
}

export function AddPasskey() {
  const [state, setState] = useState<string | null>(null);
  const add = async () => {
    setState(null);
    try {
      const optionsJSON = await api<Parameters<typeof startRegistration>[0]['optionsJSON']>('POST', '/passkeys/options', {});
      const credential = await startRegistration({ optionsJSON });
      await api('POST', '/passkeys', { credential });
      setState('Passkey added: you can sign in with it from now on.');
    } catch (err) {
      setState(`Not added: ${messageOf(err)}`);
    }
  };
  return (
    <section class="narrow">
      <h1 tabIndex={-1}>Add a passkey</h1>
      <p>A passkey signs you in with this device's screen lock or a security key, without a password.</p>
      <button type="button" id="add-passkey" onClick={add}>Add a passkey</button>
      {state && <p role="status" id="passkey-state">{state}</p>}
    </section>
  );
}
