import type { AdminCommand } from '../admin/commands.js';
import type { RuleView } from '../admin/rule-commands.js';
import type { Verdict } from '../domain/verdicts.js';
import type { ClientThrottleView, CountryThrottle, PrefixBlock } from '../admin/prefix-blocks.js';
import type { ProviderStatus } from '../admin/provider-status.js';
import type { RouteView } from '../admin/route-commands.js';
import type { PeriodSpend } from '../domain/budgets.js';
import type { CostRow } from '../domain/cost-report.js';
import type { Price } from '../domain/prices.js';
import type { ClientHooks } from '../oauth/client-service.js';

/** The --json output: the value on one line; `stats`, one object a line, one per row. */
export function jsonLines(command: AdminCommand, value: unknown): string {
  if (command.name !== 'stats') return `${JSON.stringify(value)}\n`;
  return statsRows(value)
    .map((row) => `${JSON.stringify(row)}\n`)
    .join('');
}

/** Human-readable output of a command's result (the --json output is the value itself). */
export function formatResult(command: AdminCommand, value: unknown): string {
  switch (command.name) {
    case 'webhooks.list':
      return formatEventList(value);
    case 'webhooks.show':
      return formatEventDetail(value);
    case 'webhooks.replay':
      return formatReplay(value);
    case 'clients.list':
      return formatClientList(value);
    case 'clients.show':
      return formatClientShow(value);
    case 'clients.update':
    case 'clients.templates.remove':
    case 'clients.test-numbers.add':
    case 'clients.test-numbers.remove':
      return `saved. The client's settings now:\n${formatSettings(value)}`;
    case 'clients.templates.preview': {
      if (command.channel === 'voice') {
        const v = value as { locale: string; sample: string };
        return `not saved. With the ${v.locale} voice template a call says, VOICE_REPEAT times:\n\n${v.sample}\n`;
      }
      const t = value as { locale: string; encoding: string; parts: number; sample: string };
      return `not saved. The ${t.locale} template goes out as ${t.encoding}, ${t.parts} SMS part${t.parts === 1 ? '' : 's'} at most. A user reads:\n\n${t.sample}\n`;
    }
    case 'verifications.find': {
      type Life = { id: string; createdAt: string; phoneNumber: string; type: string; status: string; reference: string | null; clientId: string; delivery: { status: string; provider: string | null }; webhooks: unknown[] };
      const found = value as Life[];
      if (found.length === 0) return 'no verification found\n';
      const rows = found.map((v) => [v.id, v.createdAt, v.phoneNumber, v.type, v.status, `${v.delivery.status} via ${v.delivery.provider ?? '-'}`, v.webhooks.length, v.reference ?? '-', v.clientId].join('\t'));
      return `ID\tCREATED\tNUMBER\tTYPE\tSTATUS\tDELIVERY\tWEBHOOKS\tREFERENCE\tCLIENT\n${rows.join('\n')}\n(--json for each one's whole life)\n`;
    }
    case 'clients.templates.set': {
      if (command.channel === 'voice') {
        const v = value as { locale: string; sample: string };
        return `saved the ${v.locale} voice template. A call says, VOICE_REPEAT times:\n\n${v.sample}\n`;
      }
      const t = value as { locale: string; encoding: string; parts: number; sample: string };
      return `saved the ${t.locale} template: ${t.encoding}, ${t.parts} SMS part${t.parts === 1 ? '' : 's'} at most. A user reads:\n\n${t.sample}\n`;
    }
    case 'blocks.list': {
      const blocks = value as (PrefixBlock | CountryThrottle | ClientThrottleView)[];
      if (blocks.length === 0) return 'no prefix is blocked, no country throttled\n';
      const rows = blocks.map((b) =>
        'prefix' in b
          ? `${b.prefix}\t${b.blockedAt}\t${b.blockedUntil}\tprefix velocity (PREFIX_LIMIT_COUNT)`
          : 'clientId' in b && b.of === 'resends'
            ? `client ${b.clientId}\t${b.blockedAt}\t${b.blockedUntil}\tresends: ${b.verified} codes verified of ${b.sends} resends (MIN_CONVERSION on MIN_RESEND_SAMPLE), unknown users' resends capped (UNKNOWN_USER_RESENDS)`
          : 'clientId' in b
            ? `client ${b.clientId}\t${b.blockedAt}\t${b.blockedUntil}\tconversion across all countries ${b.verified}/${b.sends} verified (MIN_CONVERSION), throttled to the prefix limit`
            : `${b.country} (${b.countryCode})${b.network === undefined ? '' : ` ${b.network}`} via ${b.provider}\t${b.blockedAt}\t${b.blockedUntil}\tconversion ${b.verified}/${b.sends} verified (MIN_CONVERSION), throttled to the prefix limit`,
      );
      return `BLOCKED\tSINCE\tUNTIL\tWHY\n${rows.join('\n')}\n`;
    }
    case 'stats':
      return formatStats(value, command.clientId === null);
    case 'lists.show': {
      type Entry = { value: string; clientId: string | null; note: string | null; createdAt: string };
      const { blocks, allows } = value as { blocks: Entry[]; allows: Entry[] };
      if (blocks.length + allows.length === 0) return 'no number is blocked or allowed\n';
      const row = (kind: string) => (e: Entry) => `${kind}\t${e.value}\t${e.clientId ?? 'every client'}\t${e.createdAt}\t${e.note ?? ''}`;
      return `LIST\tVALUE\tCLIENT\tADDED\tNOTE\n${[...blocks.map(row('block')), ...allows.map(row('allow'))].join('\n')}\n`;
    }
    case 'lists.add':
    case 'lists.remove': {
      const v = value as { added?: string; updated?: string; removed?: string; kind: string; clientId: string | null };
      const scope = v.clientId === null ? 'every client' : `client ${v.clientId}`;
      if (v.removed !== undefined) return `removed ${v.removed} from the ${v.kind} list of ${scope}\n`;
      return `${v.added !== undefined ? 'added' : 'updated'} ${v.added ?? v.updated ?? ''} on the ${v.kind} list of ${scope}\n`;
    }
    case 'verdicts': {
      const rows = (value as Verdict[]).map((v) => `${v.rule}\t${v.factor}\t${v.refused}\t${v.shadowed}\t${v.verifiedLater}`);
      return `RULE\tFACTOR\tREFUSED\tSHADOWED\tVERIFIED LATER\n${rows.join('\n')}\n`;
    }
    case 'rules.list': {
      const rules = value as RuleView[];
      const rows = rules.map((r) => `${r.rule}\t${r.factor}\t${r.mode}\t${Object.entries(r.clients).map(([id, mode]) => `${id}=${mode}`).join(' ')}`);
      return `RULE\tFACTOR\tMODE\tCLIENTS\n${rows.join('\n')}\n`;
    }
    case 'rules.set': {
      const r = value as RuleView;
      const own = Object.entries(r.clients).map(([id, mode]) => `, client ${id} ${mode}`).join('');
      return `rule ${r.rule} (${r.factor}): ${r.mode} for every client${own}\n`;
    }
    case 'routes.list': {
      const routes = value as RouteView[];
      const rows = routes.flatMap((r) => [
        [
          r.channel,
          r.destination,
          r.providers.join(','),
          r.policy === 'best' ? 'best' : (r.weights?.join(',') ?? '-'),
          r.failoverAfterSeconds === null ? '-' : `${r.failoverAfterSeconds} s`,
          r.source === 'settings' ? "(the channel's provider setting)" : '',
        ].join('\t'),
        // A best route's shares, and what each comes from.
        ...(r.shares ?? []).map(
          (s) =>
            `  ${s.provider}: ${s.perMille / 10} % of first sends (${s.why}): ${s.sends} sent in the last hour, ${s.delivered} delivered, ${s.verified} verified; score ${s.score.toFixed(3)}`,
        ),
      ]);
      return `CHANNEL\tDESTINATION\tPROVIDERS\tWEIGHTS\tFAILOVER AFTER\n${rows.join('\n')}\n`;
    }
    case 'routes.set': {
      const { added, updated } = value as { added?: RouteView; updated?: RouteView };
      const r = added ?? updated;
      if (!r) return '';
      const order =
        r.policy === 'best'
          ? `${r.providers.join(', ')}, the first drawn by the last hour's delivered and verified shares (the best, each other at least 5 %), then the others in order`
          : r.weights
            ? `${r.providers.join(', ')}, the first drawn by weights ${r.weights.join(',')}, then the others in order`
            : r.providers.join(', then ');
      const failover = r.failoverAfterSeconds === null ? '' : `; a code not delivered ${r.failoverAfterSeconds} s after a provider took it goes once through the next`;
      return `${added ? 'added' : 'updated'}: ${r.channel} to ${r.destination} through ${order}${failover}\n`;
    }
    case 'prices.list': {
      const prices = value as Price[];
      if (prices.length === 0) return 'no prices: otp-service prices import FILE.csv\n';
      const rows = prices.map((p) => [p.provider, p.channel, p.destination, `${p.price} ${p.currency}`].join('\t'));
      return `PROVIDER\tCHANNEL\tDESTINATION\tPRICE\n${rows.join('\n')}\n`;
    }
    case 'prices.import': {
      const { file, added, updated } = value as { file: string; added: number; updated: number };
      return `imported ${file}: ${added} price${added === 1 ? '' : 's'} added, ${updated} updated\n`;
    }
    case 'prices.remove': {
      const { removed } = value as { removed: { provider: string; channel: string; destination: string } };
      return `removed the ${removed.provider} ${removed.channel} price for ${removed.destination}\n`;
    }
    case 'costs': {
      const rows = value as CostRow[];
      if (rows.length === 0) return 'no send was made in those days\n';
      const lines = rows.map((r) => [r[command.by] ?? '-', r.sends, r.verified, r.cost, r.costPerVerified ?? '-', r.unknownSends].map(String).join('\t'));
      return `${command.by.toUpperCase()}\tSENDS\tVERIFIED\tCOST\tPER VERIFIED\tUNKNOWN PRICE\n${lines.join('\n')}\n`;
    }
    case 'routes.remove': {
      const { removed } = value as { removed: { channel: string; destination: string } };
      return `removed the ${removed.channel} route for ${removed.destination}\n`;
    }
    case 'blocks.lift':
      return `lifted the block on ${(value as { lifted: string }).lifted}\n`;
    case 'clients.templates.list':
    case 'clients.test-numbers.list': {
      const entries = Object.entries(value as Record<string, string>);
      if (entries.length === 0) {
        if (command.name === 'clients.test-numbers.list') return 'no test numbers\n';
        return command.channel === 'voice' ? 'no voice templates: calls say the default sentence\n' : 'no templates: texts are the English default\n';
      }
      return `${entries.map(([k, v]) => `${k}\t${v}`).join('\n')}\n`;
    }
    case 'operators.list': {
      type Op = { id: string; email: string; hasPassword: boolean; passkeys: number; createdAt: string; disabledAt: string | null };
      const ops = value as Op[];
      if (ops.length === 0) return 'no operators yet: otp-service operators create --email EMAIL\n';
      const rows = ops.map((o) => [o.id, o.email, o.hasPassword ? 'yes' : 'no', o.passkeys, o.createdAt, o.disabledAt ?? '-'].join('\t'));
      return `ID\tEMAIL\tPASSWORD\tPASSKEYS\tCREATED\tDISABLED\n${rows.join('\n')}\n`;
    }
    case 'operators.create':
    case 'operators.link': {
      const o = value as { id: string; email: string; link: string; linkExpiresAt: string };
      return `operator ${o.email} (${o.id})\nTheir one-time link, to set a password (and a passkey), until ${o.linkExpiresAt}:\n\n  ${o.link}\n\nSend it to them privately: whoever opens it first becomes this operator.\n`;
    }
    case 'providers.status': {
      const rows = (value as ProviderStatus[]).map((p) =>
        [
          p.channel,
          p.order,
          p.provider,
          p.circuit,
          p.sendsAnswered,
          p.meanSendSeconds === null ? '-' : `${Math.round(p.meanSendSeconds * 1000)} ms`,
          `${p.lastDay.delivered}/${p.lastDay.verifications}`,
          p.lastDay.failures,
          p.lastDay.lastError ? `${p.lastDay.lastError.at} ${p.lastDay.lastError.code}: ${p.lastDay.lastError.message}` : '-',
        ].join('\t'),
      );
      return `CHANNEL\tORDER\tPROVIDER\tCIRCUIT\tSENDS\tMEAN ANSWER\tDELIVERED (24 h)\tFAILED CALLS (24 h)\tLAST ERROR\n${rows.join('\n')}\n`;
    }
    case 'erase': {
      const e = value as { phoneNumber: string; verifications: number; messages: number; webhookEvents: number; lookups: number; listEntries: number };
      return (
        `erased ${e.phoneNumber}: ${e.verifications} verification(s) (their numbers, codes, references and signals), ${e.messages} message(s) sent, ` +
        `${e.webhookEvents} webhook event(s), ${e.lookups} lookup(s); ${e.listEntries} list entr${e.listEntries === 1 ? 'y' : 'ies'} kept without a note\n`
      );
    }
    case 'clients.hooks':
    case 'clients.rotate-hook-secret': {
      const h = value as ClientHooks;
      if (h.hookSecret === null) return `relays: off (turn them on with: otp-service clients hooks ${h.clientId} --enable)\n`;
      const lines = Object.entries(h).map(([k, v]) => `${k}: ${String(v)}`);
      return `${lines.join('\n')}\n`;
    }
    case 'audit.list': {
      type Entry = { at: string; actor: string; action: string; target: string | null; outcome: string };
      const entries = value as Entry[];
      if (entries.length === 0) return 'no change recorded yet\n';
      return `AT\tACTOR\tACTION\tTARGET\tOUTCOME\n${entries.map((e) => [e.at, e.actor, e.action, e.target ?? '-', e.outcome].join('\t')).join('\n')}\n`;
    }
    default:
      break;
  }
  const record = value as Record<string, unknown>;
  const lines = Object.entries(record).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(' ') : String(v)}`);
  const secretShown = 'clientSecret' in record || command.name === 'clients.rotate-webhook-secret';
  if (secretShown) lines.push('', 'Store the secrets now: they are not shown again.');
  return `${lines.join('\n')}\n`;
}

/** The rows of a `stats` result ({ from, to, rows }). */
function statsRows(value: unknown): Record<string, unknown>[] {
  const rows = (value as { rows?: unknown }).rows;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}

/** A header, then a line per day and country; every client's rows start with their client id. */
function formatStats(value: unknown, allClients: boolean): string {
  const { from, to } = value as { from: string; to: string };
  const rows = statsRows(value);
  if (rows.length === 0) return `no traffic from ${from} to ${to}\n`;
  const byProvider = rows.some((r) => 'provider' in r);
  const columns = ['day', 'regionCode', 'countryCode', 'channel', ...(byProvider ? ['provider'] : []), 'sends', 'delivered', 'verified', 'cost', 'costPerVerified'];
  const header = ['DAY', 'REGION', 'COUNTRY', 'CHANNEL', ...(byProvider ? ['PROVIDER'] : []), 'SENDS', 'DELIVERED', 'VERIFIED', 'COST', 'PER VERIFIED'];
  const lines = rows.map((r) => [...(allClients ? [r.clientId] : []), ...columns.map((c) => r[c] ?? '-')].map(String).join('\t'));
  return `${[...(allClients ? ['CLIENT_ID'] : []), ...header].join('\t')}\n${lines.join('\n')}\n`;
}

/** A client's fields, then its settings. */
function formatClientShow(value: unknown): string {
  const { settings, budgets, ...client } = value as Record<string, unknown>;
  const lines = Object.entries(client).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(' ') : String(v)}`);
  const spend = (Array.isArray(budgets) ? (budgets as PeriodSpend[]) : []).map(
    (b) => `  ${b.period === 'day' ? 'today' : 'this month'} (from ${b.starts}): ${b.spent} spent${b.limit === null ? ', no limit' : ` of ${b.limit}`}`,
  );
  return `${lines.join('\n')}\nsettings:\n${formatSettings(settings)}${spend.length > 0 ? `spend (COST_CURRENCY):\n${spend.join('\n')}\n` : ''}`;
}

/** One line per setting, indented; templates and test numbers one per line under theirs. */
function formatSettings(value: unknown): string {
  const s = value as Record<string, unknown>;
  const lines = Object.entries(s).flatMap(([k, v]) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const entries = Object.entries(v as Record<string, unknown>);
      return [`  ${k}:${entries.length === 0 ? ' none' : ''}`, ...entries.map(([ek, ev]) => `    ${ek}: ${String(ev)}`)];
    }
    const shown = v === null ? (k === 'allowedCountries' ? 'all' : 'none') : Array.isArray(v) ? (v.length > 0 ? v.join(',') : 'none') : String(v);
    return [`  ${k}: ${shown}`];
  });
  return `${lines.join('\n')}\n`;
}

/** A header, then one line per client (tab-separated). */
function formatClientList(value: unknown): string {
  const clients = Array.isArray(value) ? (value as Record<string, unknown>[]) : [];
  if (clients.length === 0) return 'no clients\n';
  const rows = clients.map((c) => {
    const scopes = Array.isArray(c.scopes) ? c.scopes.join(' ') : '';
    return [c.clientId, c.status, c.name, scopes, c.createdAt].map(String).join('\t');
  });
  return `${['CLIENT_ID', 'STATUS', 'NAME', 'SCOPES', 'CREATED'].join('\t')}\n${rows.join('\n')}\n`;
}

/** What a replay did: the event is due again now; its earlier attempts stay in its log. */
function formatReplay(value: unknown): string {
  const e = value as Record<string, unknown>;
  const id = String(e.id);
  return [
    `Replayed event ${id} (${String(e.event)} of verification ${String(e.verificationId)}).`,
    `It is ${String(e.deliveryStatus)} again and will be sent to ${String(e.webhookUrl)} now, with a fresh retry schedule;`,
    `its ${String(e.attemptCount)} earlier attempt${e.attemptCount === 1 ? '' : 's'} stay in its log.`,
    `Follow it with: otp-service webhooks show ${id}`,
    '',
  ].join('\n');
}

/** One line per event: id, status, attempts, kind, verification, created, next attempt or last error. */
function formatEventList(value: unknown): string {
  const events = Array.isArray(value) ? (value as Record<string, unknown>[]) : [];
  if (events.length === 0) return 'no events\n';
  const rows = events.map((e) =>
    [
      e.id,
      e.inFlight === true ? 'in-flight' : e.deliveryStatus,
      `attempts=${String(e.attemptCount)}`,
      e.event,
      e.verificationId,
      e.createdAt,
      e.deliveryStatus === 'pending' && e.nextAttemptAt ? `next=${String(e.nextAttemptAt)}` : (e.lastError ?? ''),
    ]
      .map(String)
      .join('\t'),
  );
  return `${rows.join('\n')}\n`;
}

/** The event's fields, then one line per attempt. */
function formatEventDetail(value: unknown): string {
  const event = value as Record<string, unknown>;
  const { attempts, payload, ...fields } = event;
  const lines = Object.entries(fields).map(([k, v]) => `${k}: ${v === null ? '-' : String(v)}`);
  lines.push(`payload: ${JSON.stringify(payload)}`, '', 'attempts:');
  const list = Array.isArray(attempts) ? (attempts as Record<string, unknown>[]) : [];
  if (list.length === 0) lines.push('  none yet');
  for (const a of list) {
    const result = a.statusCode !== null ? `HTTP ${String(a.statusCode)}` : '';
    const error = a.error !== null ? String(a.error) : '';
    const duration = a.durationMs !== null ? `${String(a.durationMs)} ms` : '';
    lines.push(
      `  #${String(a.attempt)}\t${String(a.attemptedAt)}\t${String(a.outcome)}\t${[result, error, duration].filter(Boolean).join('  ')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
