import { parse } from 'csv-parse/sync';
import { sendingChannels as channels, type Channel } from '../domain/channel-driver.js';
import { destinationRank, parseDestination } from '../domain/destinations.js';
import { isCurrency, parseAmount } from '../domain/money.js';
import type { Price, PriceStore } from '../domain/prices.js';

/**
 * `otp-service prices import FILE.csv`, `prices list` and `prices remove PROVIDER CHANNEL DESTINATION` (contract
 * 17). An import carries the file's text: it is checked whole, and any line wrong changes nothing.
 */
export type PriceCommand =
  | { readonly name: 'prices.import'; readonly csv: string; readonly file: string }
  | { readonly name: 'prices.remove'; readonly provider: string; readonly channel: string; readonly destination: string }
  | { readonly name: 'prices.list' };

/** What the price commands use. */
export interface PriceDeps {
  readonly store: PriceStore;
  /** Reads the prices again in this process, so that its sends are priced by a change at once. */
  readonly changed: () => Promise<void>;
  /** COST_CURRENCY: the one currency of the deployment's figures. */
  readonly currency: string;
  /** Whether the service has a provider of this name (a typo would price nothing). */
  readonly knownProvider: (name: string) => boolean;
}

type Result = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

export function isPriceCommandName(name: unknown): name is PriceCommand['name'] {
  return name === 'prices.import' || name === 'prices.remove' || name === 'prices.list';
}

/** Checks a price command that came over the admin socket (untyped JSON); an error text when it is not one. */
export function parsePriceCommand(c: Record<string, unknown>): PriceCommand | string {
  if (c.name === 'prices.list') return { name: 'prices.list' };
  if (c.name === 'prices.import') {
    return typeof c.csv === 'string' && typeof c.file === 'string' ? { name: 'prices.import', csv: c.csv, file: c.file } : 'prices.import needs the file';
  }
  if (c.name === 'prices.remove' && typeof c.provider === 'string' && typeof c.channel === 'string' && typeof c.destination === 'string') {
    return { name: 'prices.remove', provider: c.provider, channel: c.channel, destination: c.destination };
  }
  return `${String(c.name)} needs a provider, a channel and a destination`;
}

/** The columns of a price sheet, in this order, after a header line. */
export const priceColumns = ['provider', 'channel', 'destination', 'currency', 'price'] as const;

/** A sheet's prices, or every line that is wrong (up to 20), each with its line number. */
export function parsePriceSheet(csv: string, deps: Pick<PriceDeps, 'currency' | 'knownProvider'>): { readonly prices: Price[] } | { readonly problems: string[] } {
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(csv, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: true, record_delimiter: ['\r\n', '\n', '\r'], info: true }) as unknown as typeof records;
  } catch (e) {
    return { problems: [`not a CSV file: ${(e as Error).message}`] };
  }
  const [header, ...lines] = records;
  const wanted = priceColumns.join(',');
  if (header?.record.map((h) => h.toLowerCase()).join(',') !== wanted) return { problems: [`the first line must be the header ${wanted}`] };
  const problems: string[] = [];
  const prices: Price[] = [];
  const seen = new Map<string, number>();
  for (const { record, info } of lines) {
    const at = `line ${info.lines}`;
    const checked = checkLine(record, deps);
    if ('problem' in checked) {
      problems.push(`${at}: ${checked.problem}`);
      continue;
    }
    const key = `${checked.provider}|${checked.channel}|${checked.destination}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) problems.push(`${at}: ${checked.provider} ${checked.channel} ${checked.destination} is priced on line ${earlier} too`);
    seen.set(key, info.lines);
    prices.push(checked);
  }
  if (problems.length > 0) return { problems: problems.slice(0, 20) };
  if (prices.length === 0) return { problems: ['the file has no price under its header'] };
  return { prices };
}

function checkLine(line: readonly string[], deps: Pick<PriceDeps, 'currency' | 'knownProvider'>): Price | { readonly problem: string } {
  if (line.length !== priceColumns.length) return { problem: `${line.length} columns, not ${priceColumns.length} (${priceColumns.join(',')})` };
  const [rawProvider = '', rawChannel = '', rawDestination = '', rawCurrency = '', rawPrice = ''] = line;
  const provider = rawProvider.toLowerCase();
  if (!deps.knownProvider(provider)) return { problem: `no provider is named "${rawProvider}"` };
  const channel = channels.find((c) => c === rawChannel.toLowerCase());
  if (!channel) return { problem: `the channel is ${channels.join(', ')}, not "${rawChannel}"` };
  const destination = parseDestination(rawDestination);
  if (destination === null) return { problem: `the destination is a country (NG), + and the start of a number (+23480) or default, not "${rawDestination}"` };
  const currency = rawCurrency.toUpperCase();
  if (!isCurrency(currency)) return { problem: `the currency is an ISO 4217 code (${deps.currency}), not "${rawCurrency}"` };
  if (currency !== deps.currency) return { problem: `the price is in ${currency}, and this service counts in ${deps.currency} (COST_CURRENCY)` };
  const price = parseAmount(rawPrice);
  if (price === null) return { problem: `the price is a decimal number of ${currency} (0.0125), not "${rawPrice}"` };
  return { provider, channel, destination, currency, price };
}

/** An import's prices, or what is wrong with its file, said so that the operator can fix it (every line wrong, up to 20). */
export function checkPriceImport(
  command: Extract<PriceCommand, { name: 'prices.import' }>,
  deps: Pick<PriceDeps, 'currency' | 'knownProvider'>,
): { readonly prices: Price[] } | { readonly problem: string } {
  const sheet = parsePriceSheet(command.csv, deps);
  return 'problems' in sheet ? { problem: `${command.file}: nothing imported: ${sheet.problems.join('; ')}` } : sheet;
}

export async function runPriceCommand(deps: PriceDeps, command: PriceCommand): Promise<Result> {
  switch (command.name) {
    case 'prices.list':
      return { ok: true, value: sorted(await deps.store.all()) };
    case 'prices.import': {
      const sheet = checkPriceImport(command, deps);
      if ('problem' in sheet) return { ok: false, error: sheet.problem };
      const counts = await deps.store.put(sheet.prices);
      await deps.changed();
      return { ok: true, value: { file: command.file, ...counts } };
    }
    case 'prices.remove': {
      const channel = channels.find((c) => c === command.channel.toLowerCase());
      const destination = parseDestination(command.destination);
      if (!channel || destination === null) return { ok: false, error: `there is no ${command.provider} ${command.channel} price for ${command.destination}` };
      const provider = command.provider.toLowerCase();
      if (!(await deps.store.remove(provider, channel, destination))) return { ok: false, error: `there is no ${provider} ${channel} price for ${destination}` };
      await deps.changed();
      return { ok: true, value: { removed: { provider, channel, destination } } };
    }
  }
}

/** As `prices list` shows them: by provider and channel, then prefixes, countries and `default` as they are matched. */
function sorted(prices: readonly Price[]): Price[] {
  const order = (c: Channel) => channels.indexOf(c);
  return [...prices].sort(
    (a, b) =>
      a.provider.localeCompare(b.provider) ||
      order(a.channel) - order(b.channel) ||
      destinationRank(a.destination) - destinationRank(b.destination) ||
      a.destination.localeCompare(b.destination),
  );
}
