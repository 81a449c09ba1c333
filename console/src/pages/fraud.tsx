import { useEffect, useState } from 'preact/hooks';
import { data, messageOf } from '../api.js';

type Block =
  | { prefix: string; blockedAt: string; blockedUntil: string }
  | { country: string; countryCode: string; network?: string; provider: string; blockedAt: string; blockedUntil: string; sends: number; verified: number }
  | { clientId: string; blockedAt: string; blockedUntil: string; sends: number; verified: number; of?: 'resends' };
interface Rule {
  readonly rule: string;
  readonly factor: string;
  readonly mode: string;
  readonly clients: Record<string, string>;
}
interface Verdict {
  readonly rule: string;
  readonly refused: number;
  readonly shadowed: number;
  readonly verifiedLater: number;
}
interface Entry {
  readonly value: string;
  readonly clientId: string | null;
  readonly note: string | null;
  readonly createdAt: string;
}

/** What `blocks lift` takes for a block: its prefix, its country, or its client. */
function liftKey(b: Block): string {
  return 'prefix' in b ? b.prefix : 'country' in b ? b.country : b.clientId;
}

function what(b: Block): string {
  if ('prefix' in b) return `prefix ${b.prefix}: too many creates (prefix velocity)`;
  if ('country' in b) return `${b.country} (${b.countryCode})${b.network === undefined ? '' : ` ${b.network}`} via ${b.provider}: ${b.verified}/${b.sends} verified, throttled`;
  if (b.of === 'resends') return `client ${b.clientId}: ${b.verified} codes verified of ${b.sends} resends, unknown users' resends capped`;
  return `client ${b.clientId}: ${b.verified}/${b.sends} verified across all countries, throttled`;
}

export function Fraud() {
  const [blocks, setBlocks] = useState<Block[] | null>(null);
  const [lists, setLists] = useState<{ blocks: Entry[]; allows: Entry[] } | null>(null);
  const [state, setState] = useState<string | null>(null);
  const [kind, setKind] = useState<'block' | 'allow'>('block');
  const [value, setValue] = useState('');
  const [note, setNote] = useState('');
  const [rules, setRules] = useState<Rule[] | null>(null);
  const [verdicts, setVerdicts] = useState<Verdict[]>([]);
  const load = async () => {
    try {
      setBlocks(await data<Block[]>('GET', '/blocks'));
      setLists(await data<{ blocks: Entry[]; allows: Entry[] }>('GET', '/lists'));
      setRules(await data<Rule[]>('GET', '/rules'));
      setVerdicts(await data<Verdict[]>('GET', '/verdicts'));
    } catch (err) {
      setState(messageOf(err));
    }
  };
  useEffect(() => void load(), []);
  const lift = async (key: string) => {
    try {
      await data('POST', '/blocks/lift', { prefix: key });
      setState(`Lifted ${key}.`);
      await load();
    } catch (err) {
      setState(`Not lifted: ${messageOf(err)}`);
    }
  };
  const add = async (e: Event) => {
    e.preventDefault();
    try {
      await data('POST', '/lists', { kind, value, note: note || null });
      setState(`Added ${value} to the ${kind} list.`);
      setValue('');
      setNote('');
      await load();
    } catch (err) {
      setState(`Not added: ${messageOf(err)}`);
    }
  };
  const remove = async (k: 'block' | 'allow', e: Entry) => {
    try {
      await data('POST', '/lists/remove', { kind: k, value: e.value, clientId: e.clientId });
      setState(`Removed ${e.value} from the ${k} list.`);
      await load();
    } catch (err) {
      setState(`Not removed: ${messageOf(err)}`);
    }
  };
  const setMode = async (rule: string, mode: string) => {
    try {
      await data('POST', '/rules', { rule, mode });
      setState(`Rule ${rule}: ${mode} for every client.`);
      await load();
    } catch (err) {
      setState(`Not changed: ${messageOf(err)}`);
    }
  };
  const entries = (k: 'block' | 'allow', list: readonly Entry[]) =>
    list.map((e) => (
      <tr key={`${k}${e.value}${e.clientId ?? ''}`}>
        <td>{k}</td><th scope="row">{e.value}</th><td>{e.clientId ?? 'every client'}</td><td>{e.note ?? ''}</td>
        <td><button type="button" onClick={() => void remove(k, e)} aria-label={`Remove ${e.value} from the ${k} list`}>Remove</button></td>
      </tr>
    ));
  return (
    <section>
      <h1 tabIndex={-1}>Fraud</h1>
      {state && <p role="status" id="fraud-state">{state}</p>}
      <h2>Blocks and throttles in force</h2>
      {blocks && blocks.length === 0 ? <p id="no-blocks">No prefix is blocked, no country or client throttled.</p> : (
        <table id="blocks">
          <caption>Blocks and throttles</caption>
          <thead><tr><th scope="col">What</th><th scope="col">Since</th><th scope="col">Until</th><th scope="col">Lift</th></tr></thead>
          <tbody>
            {blocks?.map((b) => (
              <tr key={`${liftKey(b)}${'of' in b && b.of ? `|${b.of}` : ''}`} data-block={liftKey(b)}>
                <th scope="row">{what(b)}</th><td>{b.blockedAt}</td><td>{b.blockedUntil}</td>
                <td><button type="button" onClick={() => void lift(liftKey(b))} aria-label={`Lift ${liftKey(b)}`}>Lift</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Rules</h2>
      <p>
        A rule in shadow refuses nothing: the sends it would have refused go out, marked. Of what each rule refused or would have refused in
        the last 7 days, the codes verified later are real people it turned away.
      </p>
      {rules && (
        <table id="rules">
          <caption>Risk rules, last 7 days</caption>
          <thead>
            <tr><th scope="col">Rule</th><th scope="col">Factor</th><th scope="col">Mode</th><th scope="col">Refused</th><th scope="col">Shadowed</th><th scope="col">Verified later</th><th scope="col">Clients with their own mode</th></tr>
          </thead>
          <tbody>
            {rules.map((r) => {
              const v = verdicts.find((x) => x.rule === r.rule);
              return (
                <tr key={r.rule} data-rule={r.rule}>
                  <th scope="row">{r.rule}</th><td>{r.factor}</td>
                  <td>
                    <select aria-label={`Mode of ${r.rule}`} value={r.mode} onChange={(e) => void setMode(r.rule, e.currentTarget.value)}>
                      <option value="enforce">enforce</option>
                      <option value="shadow">shadow</option>
                      <option value="off">off</option>
                    </select>
                  </td>
                  <td class="refused">{v?.refused ?? 0}</td><td class="shadowed">{v?.shadowed ?? 0}</td><td class="verified-later">{v?.verifiedLater ?? 0}</td>
                  <td>{Object.entries(r.clients).map(([id, mode]) => `${id}: ${mode}`).join(', ') || '-'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <h2>Block and allow lists</h2>
      {lists && (
        <table id="lists">
          <caption>Entries</caption>
          <thead><tr><th scope="col">List</th><th scope="col">Value</th><th scope="col">Client</th><th scope="col">Note</th><th scope="col">Remove</th></tr></thead>
          <tbody>{entries('block', lists.blocks)}{entries('allow', lists.allows)}</tbody>
        </table>
      )}
      <form onSubmit={add}>
        <fieldset>
          <legend>Add an entry</legend>
          <label for="list-kind">List</label>
          <select id="list-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value === 'allow' ? 'allow' : 'block')}>
            <option value="block">block</option>
            <option value="allow">allow</option>
          </select>
          <label for="list-value">Number or prefix (+2348030)</label>
          <input id="list-value" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
          <label for="list-note">Note</label>
          <input id="list-note" value={note} onInput={(e) => setNote(e.currentTarget.value)} />
          <button type="submit">Add entry</button>
        </fieldset>
      </form>
    </section>
  );
}
