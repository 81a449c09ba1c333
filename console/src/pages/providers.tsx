import { useEffect, useState } from 'preact/hooks';
import { data, messageOf } from '../api.js';
import { Routes } from './routes.js';

interface Status {
  readonly channel: string;
  readonly provider: string;
  readonly order: number;
  readonly circuit: string;
  readonly openUntil: string | null;
  readonly failuresInARow: number;
  readonly sendsAnswered: number;
  readonly meanSendSeconds: number | null;
  readonly lastDay: {
    verifications: number;
    delivered: number;
    deliveryRate: number | null;
    failures: number;
    lastError: { code: string; message: string; at: string } | null;
  };
}

export function Providers() {
  const [rows, setRows] = useState<Status[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void data<Status[]>('GET', '/providers').then(setRows, (e) => setError(messageOf(e))), []);
  return (
    <section>
      <h1 tabIndex={-1}>Providers</h1>
      <p>Circuit state and answer times are this server process's own; the delivery rate, failed calls and last error are every instance's, over the last 24 hours.</p>
      {error && <p role="alert" class="error">{error}</p>}
      <table id="providers">
        <caption>Each channel's providers, in failover order</caption>
        <thead>
          <tr><th scope="col">Channel</th><th scope="col">Order</th><th scope="col">Provider</th><th scope="col">Circuit</th><th scope="col">Sends answered</th><th scope="col">Mean answer</th><th scope="col">Delivered (24 h)</th><th scope="col">Failed calls (24 h)</th><th scope="col">Last error</th></tr>
        </thead>
        <tbody>
          {rows?.map((p) => (
            <tr key={`${p.channel}${p.provider}`} data-provider={p.provider} data-channel={p.channel}>
              <td>{p.channel}</td>
              <td>{p.order}</td>
              <th scope="row">{p.provider}</th>
              <td>{p.circuit === 'open' ? `open until ${p.openUntil ?? ''}` : `closed${p.failuresInARow > 0 ? ` (${p.failuresInARow} failures in a row)` : ''}`}</td>
              <td>{p.sendsAnswered}</td>
              <td>{p.meanSendSeconds === null ? '-' : `${Math.round(p.meanSendSeconds * 1000)} ms`}</td>
              <td>{p.lastDay.delivered}/{p.lastDay.verifications}{p.lastDay.deliveryRate === null ? '' : ` (${Math.round(p.lastDay.deliveryRate * 100)}%)`}</td>
              <td>{p.lastDay.failures}</td>
              <td>{p.lastDay.lastError ? <><code>{p.lastDay.lastError.code}</code> {p.lastDay.lastError.message} <time dateTime={p.lastDay.lastError.at}>{p.lastDay.lastError.at}</time></> : '-'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Routes />
    </section>
  );
}
