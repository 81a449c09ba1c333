import { parse } from 'pg-connection-string';
import type pg from 'pg';

/** One server a DATABASE_URL names. */
export interface DatabaseHost {
  readonly host: string;
  readonly port: number;
}

/** A DATABASE_URL read as libpq reads it: the hosts to try in turn, and every other setting they share. */
export interface DatabaseTarget {
  readonly hosts: readonly DatabaseHost[];
  /**
   * True when only a writable server will do: several hosts (the service writes, so the read-only standbys of a
   * failover pair are never wanted) or target_session_attrs=read-write (or primary) on one.
   */
  readonly readWrite: boolean;
  /** libpq's connect_timeout (seconds) in ms, when the URL sets it: the longest one host's connect may take. */
  readonly connectTimeoutMs: number | null;
  /** What pg.Client takes for the first host; each connection sets its own host and port over it. */
  readonly config: pg.ClientConfig;
}

const placeholder = 'multi-host-placeholder';

/**
 * Reads `postgres://user:pass@h1:5432,h2:5433/db?target_session_attrs=read-write` as libpq does: pg and
 * pg-connection-string read a single host only (a comma list is not a valid URL host), so the host list is
 * taken out first, the rest parsed by pg-connection-string as usual. A host without a port takes the last port
 * given after it, or 5432, as libpq's one-port-for-all rule does for the common cases.
 */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const match = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/s.exec(url);
  if (!match) throw new Error('expected a postgres:// or postgresql:// URL');
  const [, scheme, authority, rest] = match as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : '';
  const hostList = at >= 0 ? authority.slice(at + 1) : authority;
  const config = parse(`${scheme}${userinfo}${placeholder}${rest}`) as pg.ClientConfig & Record<string, unknown>;
  const attrs = typeof config.target_session_attrs === 'string' ? config.target_session_attrs : 'any';
  if (!['any', 'read-write', 'primary'].includes(attrs)) {
    throw new Error(`target_session_attrs=${attrs}: the service writes, so only read-write (or primary, or any with one host) will do`);
  }
  const connectTimeout = config.connect_timeout === undefined ? null : Number(config.connect_timeout);
  if (connectTimeout !== null && !(connectTimeout > 0)) throw new Error('connect_timeout: expected a number of seconds above 0');
  // Those two are libpq's, read here: the rest of the settings are pg's to read.
  delete config.target_session_attrs;
  delete config.connect_timeout;
  let hosts: DatabaseHost[];
  if (config.host !== placeholder) {
    // The host came from the query (?host=/run/postgresql, a socket folder): one, as given.
    hosts = [{ host: String(config.host), port: Number(config.port ?? 5432) }];
  } else {
    const parts = hostList === '' ? [] : hostList.split(',');
    if (parts.some((p) => p === '')) throw new Error('expected host[:port], comma-separated, after the @');
    const parsed = parts.map(splitHost);
    hosts = parsed.map((h, i) => ({ host: h.host, port: h.port ?? parsed.slice(i).find((n) => n.port !== undefined)?.port ?? 5432 }));
    if (hosts.length === 0) hosts = [{ host: 'localhost', port: 5432 }];
  }
  const first = hosts[0] as DatabaseHost;
  return {
    hosts,
    readWrite: hosts.length > 1 || attrs !== 'any',
    connectTimeoutMs: connectTimeout === null ? null : connectTimeout * 1000,
    config: { ...config, host: first.host, port: first.port },
  };
}

function splitHost(part: string): { host: string; port: number | undefined } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(part);
  const plain = /^([^:[\]]+)(?::(\d+))?$/.exec(part);
  const m = bracketed ?? plain;
  if (!m) throw new Error(`expected host[:port], not ${JSON.stringify(part)}`);
  const port = m[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && (port < 1 || port > 65535)) throw new Error(`port out of range in ${JSON.stringify(part)}`);
  return { host: decodeURIComponent(m[1] as string), port };
}

/** The URL's servers as an operator would name them, without the password: `user@h1:5432,h2:5433/db`. */
export function describeDatabaseUrl(url: string): string {
  const target = parseDatabaseUrl(url);
  const user = target.config.user ? `${target.config.user}@` : '';
  const hosts = target.hosts.map((h) => `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`).join(',');
  return `${user}${hosts}/${target.config.database ?? ''}`;
}
