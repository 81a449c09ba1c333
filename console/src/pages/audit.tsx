import { useEffect, useState } from 'preact/hooks';
import { data, messageOf } from '../api.js';

interface Entry {
  readonly at: string;
  readonly actor: string;
  readonly action: string;
  readonly target: string | null;
  readonly outcome: string;
}

export function Audit() {
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void data<Entry[]>('GET', '/audit?limit=200').then(setEntries, (e) => setError(messageOf(e))), []);
  return (
    <section>
      <h1 tabIndex={-1}>Audit log</h1>
      <p>Every change made through this console or the otp-service command, newest first (also: otp-service audit).</p>
      {error && <p role="alert" class="error">{error}</p>}
      <table id="audit">
        <caption>The newest 200 changes</caption>
        <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">On</th><th scope="col">Outcome</th></tr></thead>
        <tbody>
          {entries?.map((e, i) => (
            <tr key={i}><td>{e.at}</td><td>{e.actor}</td><th scope="row">{e.action}</th><td>{e.target ?? '-'}</td><td>{e.outcome}</td></tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
