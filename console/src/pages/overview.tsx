import { useEffect, useState } from 'preact/hooks';
import { data, messageOf } from '../api.js';
import { Chart } from '../chart.js';
import { add, perVerified, spendPerDay, type Amount, type SpendLine } from '../spend.js';

interface Row {
  readonly clientId: string;
  readonly day: string;
  readonly regionCode: string | null;
  readonly countryCode: string;
  readonly channel: string;
  readonly provider: string | null;
  readonly sends: number;
  readonly delivered: number;
  readonly verified: number;
  /** What the sends cost, a decimal string in the answer's currency (COST_CURRENCY). */
  readonly cost: Amount;
}

/** The overview's figures: the stats command's answer, and the currency its costs are in. */
interface Stats {
  readonly from: string;
  readonly to: string;
  readonly currency: string;
  readonly rows: Row[];
}

interface Totals {
  sends: number;
  delivered: number;
  verified: number;
  cost: Amount;
}

/** Colours for the spend charts' lines, one a country or provider (the 6th is "Other"). */
const palette = ['#1f5fbf', '#a35200', '#1b7a3a', '#6b2fa3', '#b8004f', '#5c5c5c'];

function totalsBy(rows: readonly Row[], key: (r: Row) => string): Map<string, Totals> {
  const out = new Map<string, Totals>();
  for (const r of rows) {
    const t = out.get(key(r)) ?? { sends: 0, delivered: 0, verified: 0, cost: '0' };
    t.sends += r.sends;
    t.delivered += r.delivered;
    t.verified += r.verified;
    t.cost = add(t.cost, r.cost);
    out.set(key(r), t);
  }
  return out;
}

/** A point of a chart: a day without a verified code has no cost per verified code, and no point. */
const nullable = (amount: Amount | null) => (amount === null ? null : Number(amount));

/** Verified per send, in percent with one decimal; null without sends. */
const conversion = (t: Totals) => (t.sends > 0 ? Math.round((t.verified / t.sends) * 1000) / 10 : 0);

function days(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

function FigureTable({ id, caption, first, currency, entries }: { id: string; caption: string; first: string; currency: string; entries: readonly [string, Totals][] }) {
  return (
    <table id={id}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{first}</th>
          <th scope="col">Sends</th>
          <th scope="col">Delivered</th>
          <th scope="col">Verified</th>
          <th scope="col">Conversion</th>
          <th scope="col">Spend ({currency})</th>
          <th scope="col">Per verified ({currency})</th>
        </tr>
      </thead>
      <tbody>
        {entries.map(([k, t]) => (
          <tr key={k} data-key={k}>
            <th scope="row">{k}</th>
            <td data-field="sends">{t.sends}</td>
            <td data-field="delivered">{t.delivered}</td>
            <td data-field="verified">{t.verified}</td>
            <td>{conversion(t)}%</td>
            <td data-field="cost">{t.cost}</td>
            <td data-field="costPerVerified">{perVerified(t.cost, t.verified) ?? '-'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What a spend chart draws, as text: each line's spend per day (a row a day, a column a line), and over the days shown. */
function SpendTable({ id, caption, currency, days, lines }: { id: string; caption: string; currency: string; days: readonly string[]; lines: readonly SpendLine[] }) {
  return (
    <table id={id}>
      <caption>
        {caption}, {currency}
      </caption>
      <thead>
        <tr>
          <th scope="col">Day</th>
          {lines.map((l) => (
            <th key={l.label} scope="col">
              {l.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {days.map((d, i) => (
          <tr key={d} data-key={d}>
            <th scope="row">{d}</th>
            {lines.map((l) => (
              <td key={l.label} data-series={l.label}>
                {l.perDay[i]}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr data-key="total">
          <th scope="row">Total</th>
          {lines.map((l) => (
            <td key={l.label} data-series={l.label}>
              {l.total}
            </td>
          ))}
        </tr>
      </tfoot>
    </table>
  );
}

const spendSeries = (lines: readonly SpendLine[]) => lines.map((l, i) => ({ label: l.label, values: l.perDay.map(Number), color: palette[i % palette.length] ?? '#333' }));

export function Overview() {
  const [range, setRange] = useState('7');
  const [stats, setStats] = useState<Stats | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const to = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - (Number(range) - 1) * 86_400_000).toISOString().slice(0, 10);
    data<Stats>('GET', `/stats?from=${from}&to=${to}&byProvider=true`).then(setStats, (e) => setError(messageOf(e)));
  }, [range]);
  const byDay = stats ? totalsBy(stats.rows, (r) => r.day) : new Map<string, Totals>();
  const dayList = stats ? days(stats.from, stats.to) : [];
  const zero = { sends: 0, delivered: 0, verified: 0, cost: '0' };
  const perDay = dayList.map((d) => byDay.get(d) ?? zero);
  const byCountry = stats ? [...totalsBy(stats.rows, (r) => r.regionCode ?? r.countryCode)].sort((a, b) => b[1].sends - a[1].sends) : [];
  const byChannel = stats ? [...totalsBy(stats.rows, (r) => r.channel)].sort((a, b) => b[1].sends - a[1].sends) : [];
  const providerOf = (r: Row) => `${r.channel} ${r.provider ?? '(not sent)'}`;
  const byProvider = stats ? [...totalsBy(stats.rows, providerOf)].sort((a, b) => b[1].sends - a[1].sends) : [];
  const spendByCountry = stats ? spendPerDay(stats.rows, dayList, (r) => r.regionCode ?? r.countryCode) : [];
  const spendByProvider = stats ? spendPerDay(stats.rows, dayList, providerOf) : [];
  const currency = stats?.currency ?? '';
  return (
    <section>
      <h1 tabIndex={-1}>Overview</h1>
      <p>Every client's traffic as GET /v1/stats counts it (test numbers left out), by UTC day.</p>
      <label for="range">Days shown</label>
      <select id="range" value={range} onChange={(e) => setRange(e.currentTarget.value)}>
        <option value="7">Last 7 days</option>
        <option value="30">Last 30 days</option>
        <option value="90">Last 90 days</option>
      </select>
      {error && <p role="alert" class="error">{error}</p>}
      {stats && (
        <>
          <div class="charts">
            <Chart
              id="chart-traffic"
              kind="line"
              title="Sends, deliveries and verified, per day"
              labels={dayList.map((d) => d.slice(5))}
              series={[
                { label: 'Sends', values: perDay.map((t) => t.sends), color: '#1f5fbf' },
                { label: 'Delivered', values: perDay.map((t) => t.delivered), color: '#a35200' },
                { label: 'Verified', values: perDay.map((t) => t.verified), color: '#1b7a3a' },
              ]}
            />
            <Chart id="chart-conversion" kind="line" percent title="Conversion (verified per send), per day" labels={dayList.map((d) => d.slice(5))} series={[{ label: 'Conversion %', values: perDay.map(conversion), color: '#6b2fa3' }]} />
            <Chart
              id="chart-country"
              kind="bar"
              title="By country"
              labels={byCountry.map(([k]) => k)}
              series={[
                { label: 'Sends', values: byCountry.map(([, t]) => t.sends), color: '#1f5fbf' },
                { label: 'Verified', values: byCountry.map(([, t]) => t.verified), color: '#1b7a3a' },
              ]}
            />
            <Chart
              id="chart-channel"
              kind="bar"
              title="By channel"
              labels={byChannel.map(([k]) => k)}
              series={[
                { label: 'Sends', values: byChannel.map(([, t]) => t.sends), color: '#1f5fbf' },
                { label: 'Verified', values: byChannel.map(([, t]) => t.verified), color: '#1b7a3a' },
              ]}
            />
            <Chart
              id="chart-provider"
              kind="bar"
              title="By provider (of the latest send)"
              labels={byProvider.map(([k]) => k)}
              series={[
                { label: 'Sends', values: byProvider.map(([, t]) => t.sends), color: '#1f5fbf' },
                { label: 'Delivered', values: byProvider.map(([, t]) => t.delivered), color: '#a35200' },
                { label: 'Verified', values: byProvider.map(([, t]) => t.verified), color: '#1b7a3a' },
              ]}
            />
            <Chart id="chart-spend-country" kind="line" unit={currency} title={`Spend per day by country, ${currency}`} labels={dayList.map((d) => d.slice(5))} series={spendSeries(spendByCountry)} />
            <Chart id="chart-spend-provider" kind="line" unit={currency} title={`Spend per day by provider, ${currency}`} labels={dayList.map((d) => d.slice(5))} series={spendSeries(spendByProvider)} />
            <Chart
              id="chart-cost-per-verified"
              kind="line"
              unit={currency}
              title={`Cost per verified code, per day, ${currency}`}
              labels={dayList.map((d) => d.slice(5))}
              series={[{ label: `${currency} per verified`, values: perDay.map((t) => nullable(perVerified(t.cost, t.verified))), color: '#b8004f' }]}
            />
          </div>
          <FigureTable id="figures-day" caption="Per day" first="Day" currency={currency} entries={dayList.map((d) => [d, byDay.get(d) ?? zero])} />
          <FigureTable id="figures-country" caption="By country" first="Country" currency={currency} entries={byCountry} />
          <FigureTable id="figures-channel" caption="By channel" first="Channel" currency={currency} entries={byChannel} />
          <FigureTable id="figures-provider" caption="By provider" first="Channel and provider" currency={currency} entries={byProvider} />
          <SpendTable id="figures-spend-country" caption="Spend per day by country" currency={currency} days={dayList} lines={spendByCountry} />
          <SpendTable id="figures-spend-provider" caption="Spend per day by provider" currency={currency} days={dayList} lines={spendByProvider} />
        </>
      )}
    </section>
  );
}
