import { useEffect, useState } from 'preact/hooks';
import { data, messageOf } from '../api.js';

/** A route as `routes list --json` gives it. */
interface RouteView {
  readonly channel: string;
  readonly destination: string;
  readonly providers: readonly string[];
  readonly weights: readonly number[] | null;
  readonly failoverAfterSeconds: number | null;
  readonly policy: 'ordered' | 'best';
  readonly source: 'route' | 'settings';
  readonly shares?: readonly { provider: string; perMille: number; why: string; sends: number; delivered: number; verified: number }[];
}

const channels = ['sms', 'call', 'whatsapp', 'voice', 'telegram'] as const;

/** "80, 20" as the CLI's --weights takes it; a part that is not a whole number is sent as typed, for the command to refuse. */
const weightsOf = (text: string): (number | string)[] | null =>
  text.trim() === '' ? null : text.split(',').map((w) => (/^\s*\d+\s*$/.test(w) ? Number(w) : w.trim()));

/**
 * The routes (`otp-service routes`): each channel's providers per destination, a best route's shares and why, and
 * a form that sets one through `routes set`, refused in its own words, as the CLI is.
 */
export function Routes() {
  const [routes, setRoutes] = useState<RouteView[] | null>(null);
  const [state, setState] = useState<{ ok: boolean; text: string } | null>(null);
  const [channel, setChannel] = useState<string>('sms');
  const [destination, setDestination] = useState('');
  const [providers, setProviders] = useState('');
  const [weights, setWeights] = useState('');
  const [policy, setPolicy] = useState('ordered');
  const [after, setAfter] = useState('');
  const load = () => data<RouteView[]>('GET', '/routes').then(setRoutes, (e) => setState({ ok: false, text: messageOf(e) }));
  useEffect(() => void load(), []);
  const run = async (method: 'PUT' | 'POST', path: string, body: unknown, done: string) => {
    setState(null);
    try {
      await data(method, path, body);
      // Said once the table shows it.
      await load();
      setState({ ok: true, text: done });
    } catch (err) {
      setState({ ok: false, text: messageOf(err) });
    }
  };
  const save = (e: Event) => {
    e.preventDefault();
    const seconds = after.trim() === '' ? null : /^\s*\d+\s*$/.test(after) ? Number(after) : after;
    void run(
      'PUT',
      '/routes',
      { channel, destination, providers: providers.split(',').map((p) => p.trim()).filter(Boolean), weights: weightsOf(weights), failoverAfterSeconds: seconds, policy },
      `Route saved: ${channel} to ${destination.trim().toUpperCase()}.`,
    );
  };
  const described = state && !state.ok ? { 'aria-describedby': 'routes-problem' } : {};
  return (
    <section aria-labelledby="routes-title">
      <h2 id="routes-title">Routes</h2>
      <p>Which providers carry each channel's codes to which numbers: the longest matching prefix, then the country, then default. Every instance follows a change within 2 s.</p>
      <table id="routes">
        <caption>Routes, and each channel's provider setting where no default route replaces it</caption>
        <thead>
          <tr><th scope="col">Channel</th><th scope="col">Destination</th><th scope="col">Providers</th><th scope="col">First provider</th><th scope="col">Failover after</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
        </thead>
        <tbody>
          {routes?.map((r) => (
            <tr key={`${r.channel} ${r.destination}`} data-route={`${r.channel} ${r.destination}`}>
              <td>{r.channel}</td>
              <th scope="row">{r.destination}</th>
              <td>{r.providers.join(', ')}{r.source === 'settings' ? " (the channel's provider setting)" : ''}</td>
              <td>
                {r.policy === 'best' ? (
                  <ul class="shares">
                    {r.shares?.map((s) => (
                      <li key={s.provider}>
                        {s.provider}: {s.perMille / 10} % ({s.why}): {s.sends} sent in the last hour, {s.delivered} delivered, {s.verified} verified
                      </li>
                    ))}
                  </ul>
                ) : r.weights ? (
                  `drawn by weights ${r.weights.join(', ')}`
                ) : (
                  'in order'
                )}
              </td>
              <td>{r.failoverAfterSeconds === null ? '-' : `${r.failoverAfterSeconds} s without delivery`}</td>
              <td>
                {r.source === 'route' && (
                  <button type="button" aria-label={`Remove the ${r.channel} route for ${r.destination}`} onClick={() => void run('POST', '/routes/remove', { channel: r.channel, destination: r.destination }, `Route removed: ${r.channel} to ${r.destination}.`)}>
                    Remove
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form onSubmit={save} aria-labelledby="route-form-title" {...described}>
        <h3 id="route-form-title">Set a route</h3>
        <label for="route-channel">Channel</label>
        <select id="route-channel" value={channel} onChange={(e) => setChannel(e.currentTarget.value)}>
          {channels.map((c) => <option key={c} value={c}>{c}</option>)}
        </select>
        <label for="route-destination">Destination (a country such as NG, a prefix such as +23480, or default)</label>
        <input id="route-destination" value={destination} onInput={(e) => setDestination(e.currentTarget.value)} required />
        <label for="route-providers">Providers, in failover order (comma-separated)</label>
        <input id="route-providers" value={providers} onInput={(e) => setProviders(e.currentTarget.value)} required />
        <label for="route-policy">First provider</label>
        <select id="route-policy" value={policy} onChange={(e) => setPolicy(e.currentTarget.value)}>
          <option value="ordered">in order, or drawn by weights</option>
          <option value="best">best: chosen by the last hour's delivered and verified shares</option>
        </select>
        <label for="route-weights">Weights, one a provider (e.g. 80, 20; empty: none)</label>
        <input id="route-weights" value={weights} onInput={(e) => setWeights(e.currentTarget.value)} />
        <label for="route-failover">Send through the next provider after this many seconds without a delivery receipt (empty: never)</label>
        <input id="route-failover" inputMode="numeric" value={after} onInput={(e) => setAfter(e.currentTarget.value)} />
        <button type="submit">Save route</button>
      </form>
      {state && (state.ok ? <p role="status" id="routes-state">{state.text}</p> : <p role="alert" class="error" id="routes-problem">Not saved: {state.text}</p>)}
    </section>
  );
}
