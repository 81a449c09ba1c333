import { useState } from 'preact/hooks';
import type { VerificationLife as Life } from '../../../src/admin/verification-life.js';
import type { EventDetailView as WebhookEvent } from '../../../src/webhooks/delivery-log.js';
import { data, messageOf } from '../api.js';

function Webhook({ event, onReplayed }: { event: WebhookEvent; onReplayed: () => void }) {
  const [state, setState] = useState<string | null>(null);
  const replay = async () => {
    try {
      await data('POST', `/webhooks/${event.id}/replay`, {});
      setState('Replayed: sent again now, with a fresh retry schedule.');
      onReplayed();
    } catch (err) {
      setState(`Not replayed: ${messageOf(err)}`);
    }
  };
  return (
    <li class="webhook" data-event-id={event.id}>
      <p>
        <strong>{event.event}</strong> to {event.webhookUrl ?? 'no URL'}: <span class="delivery-status">{event.deliveryStatus}</span>, {event.attemptCount} attempt(s){' '}
        <button type="button" onClick={replay} aria-label={`Replay ${event.event} webhook ${event.id}`}>Replay</button>
      </p>
      {state && <p role="status">{state}</p>}
      {event.attempts.length > 0 && (
        <table>
          <caption>Delivery attempts of {event.event}</caption>
          <thead>
            <tr><th scope="col">#</th><th scope="col">At</th><th scope="col">Outcome</th><th scope="col">HTTP status</th><th scope="col">Error</th></tr>
          </thead>
          <tbody>
            {event.attempts.map((a) => (
              <tr key={a.attempt}><td>{a.attempt}</td><td>{a.attemptedAt}</td><td>{a.outcome}</td><td>{a.statusCode ?? '-'}</td><td>{a.error ?? '-'}</td></tr>
            ))}
          </tbody>
        </table>
      )}
    </li>
  );
}

function Detail({ v, reload }: { v: Life; reload: () => void }) {
  return (
    <article class="verification" data-verification-id={v.id} aria-labelledby={`v-${v.id}`}>
      <h2 id={`v-${v.id}`}>{v.phoneNumber} · {v.type} · <span class="status">{v.status}</span></h2>
      <dl>
        <dt>Id</dt><dd>{v.id}</dd>
        <dt>Client</dt><dd><a href={`/console/clients/${v.clientId}`}>{v.clientId}</a></dd>
        <dt>Created</dt><dd>{v.createdAt}</dd>
        <dt>Expires</dt><dd>{v.expiresAt}</dd>
        <dt>Country</dt><dd>{v.region ?? '-'}</dd>
        <dt>Reference</dt><dd>{v.reference ?? '-'}</dd>
        <dt>Wrong codes tried</dt><dd>{v.attempts}</dd>
        <dt>Sends asked for</dt><dd>{v.sends}</dd>
        <dt>Delivery</dt><dd>{v.delivery.status} via {v.delivery.provider ?? '-'} ({v.delivery.channel}), {v.delivery.attempts} call(s){v.delivery.lastError && <>; last error <code>{v.delivery.lastError.code}</code> {v.delivery.lastError.message}</>}</dd>
        {v.failureReason && (<><dt>Failure</dt><dd>{v.failureReason}</dd></>)}
        <dt>Risk</dt>
        <dd class="risk">{v.risk.verdict}{v.risk.factors.map((f) => ` · ${f.factor} (rule ${f.rule}, ${f.mode})`).join('')}</dd>
      </dl>
      <table>
        <caption>Deliveries</caption>
        <thead><tr><th scope="col">At</th><th scope="col">Channel</th><th scope="col">Provider</th><th scope="col">Status</th><th scope="col">Calls</th><th scope="col">Last error</th></tr></thead>
        <tbody>
          {v.deliveries.map((d, i) => (
            <tr key={i}>
              <td>{d.at}</td><td>{d.channel}</td><td>{d.provider}</td><td>{d.status}</td><td>{d.attempts}</td>
              <td>{d.lastError ? <><code>{d.lastError.code}</code> {d.lastError.message} ({d.lastError.at})</> : '-'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Webhooks</h3>
      {v.webhooks.length === 0 ? <p>No webhook events.</p> : <ul class="webhooks">{v.webhooks.map((e) => <Webhook key={e.id} event={e} onReplayed={reload} />)}</ul>}
    </article>
  );
}

export function Verifications() {
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<Life[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const search = async (q: string) => {
    setError(null);
    try {
      setFound(await data<Life[]>('GET', `/verifications?q=${encodeURIComponent(q)}`));
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section>
      <h1 tabIndex={-1}>Verifications</h1>
      <form role="search" onSubmit={(e) => { e.preventDefault(); void search(query); }}>
        <label for="q">Id, number (+2348031234567) or reference</label>
        <input id="q" type="search" required value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        <button type="submit">Find</button>
      </form>
      {error && <p role="alert" class="error">{error}</p>}
      {found && <p role="status" id="found-count">{found.length === 0 ? 'No verification found.' : `${found.length} found, newest first.`}</p>}
      {found?.map((v) => <Detail key={v.id} v={v} reload={() => void search(query)} />)}
    </section>
  );
}
