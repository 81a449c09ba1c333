import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config.js';
import { systemClock } from '../domain/ports.js';
import { cryptoRandom } from '../domain/random.js';
import { maxMessageLimit } from '../admin/commands.js';
import { sendAdminCommand } from '../admin/socket.js';
import type { InboxMessage } from '../inbox/inbox-message.js';
import { MessageCursor } from '../inbox/message-cursor.js';
import { commandLogger } from '../logger.js';
import { createServices, type Services } from '../services.js';

export interface MessagesOptions {
  /** E.164, or null for every number. */
  readonly to: string | null;
  readonly limit: number;
  readonly follow: boolean;
  readonly json: boolean;
}

/** How often `--follow` reads again. */
const followEveryMs = 500;

/** Where the messages are read: the running server (embedded database) or the database itself. */
interface Reader {
  /** Null when it cannot be read now (the embedded database's server stopped). */
  latest(limit: number): Promise<InboxMessage[] | null>;
  recent(afterId: number, since: Date): Promise<InboxMessage[] | null>;
  close(): Promise<void>;
}

/**
 * `otp-service messages`: the latest messages, oldest first, then with --follow each new one until `signal`.
 * On PostgreSQL it reads the database itself. On the embedded database only the server's process may open it
 * (and only that process sends anything), so while a server runs it asks the server over the admin socket;
 * with none running it reads the database once and, following, waits for a server to start.
 */
export async function runMessages(
  config: Config,
  options: MessagesOptions,
  out: (text: string) => void,
  note: (text: string) => void,
  signal: AbortSignal,
): Promise<number> {
  const reader = config.DATABASE_URL ? await databaseReader(config, options.to, note) : socketReader(config, options.to);
  try {
    let latest = await reader.latest(options.limit);
    if (latest === null) {
      // The embedded database with no server: read it here, and let go of it before following.
      const direct = await databaseReader(config, options.to, note);
      try {
        latest = (await direct.latest(options.limit)) ?? [];
      } finally {
        await direct.close();
      }
      if (options.follow) note('no server is running on this DATA_DIR, so nothing is being sent; waiting for one to start\n');
    }
    const shown = [...latest].reverse();
    for (const m of shown) out(formatMessage(m, options.json));
    if (!options.follow) return 0;
    const cursor = new MessageCursor();
    cursor.fresh(shown, new Date());
    let waitingForServer = false;
    while (!signal.aborted) {
      await sleep(followEveryMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) break;
      const { afterId, since } = cursor.window(new Date());
      const recent = await reader.recent(afterId, since);
      if (recent === null) {
        if (!waitingForServer) note('the server is not running; waiting for it to start\n');
        waitingForServer = true;
        continue;
      }
      waitingForServer = false;
      for (const m of cursor.fresh(recent, new Date())) out(formatMessage(m, options.json));
    }
    return 0;
  } finally {
    await reader.close();
  }
}

/** The running server's answers on the admin socket (embedded database). */
function socketReader(config: Config, to: string | null): Reader {
  const ask = async (command: object): Promise<InboxMessage[] | null> => {
    const answer = await sendAdminCommand(config.adminSocketPath, command);
    if (answer === null) return null;
    if (typeof answer === 'object' && 'ok' in answer && answer.ok === true && 'value' in answer && Array.isArray(answer.value)) {
      return answer.value as InboxMessage[];
    }
    const error = typeof answer === 'object' && 'error' in answer ? String(answer.error) : 'unexpected answer';
    throw new Error(`the server refused: ${error}`);
  };
  return {
    latest: (limit) => ask({ name: 'messages.latest', to, limit }),
    recent: (afterId, since) => ask({ name: 'messages.recent', to, afterId, since: since.toISOString(), limit: maxMessageLimit }),
    close: async () => undefined,
  };
}

/** The database itself, through the service's own store. */
async function databaseReader(config: Config, to: string | null, err: (text: string) => void): Promise<Reader> {
  const services: Services = await createServices(config, commandLogger('warn', err), systemClock, cryptoRandom);
  return {
    latest: (limit) => services.inbox.latest(limit, to),
    recent: (afterId, since) => services.inbox.recent(afterId, since, maxMessageLimit, to),
    close: () => services.db.close(),
  };
}

/** One message: a line for people, or the contract's JSON object (contract 12). */
export function formatMessage(m: InboxMessage, json: boolean): string {
  if (json) {
    const content = m.channel === 'call' ? { callerId: m.callerId ?? m.from } : { text: m.text ?? '' };
    const line = {
      at: m.at,
      channel: m.channel,
      to: m.to,
      from: m.from,
      ...content,
      verificationId: m.verificationId,
      provider: m.provider,
      testNumber: m.testNumber,
    };
    return `${JSON.stringify(line)}\n`;
  }
  const state = m.state ? `${m.state.status} (${m.state.deliveryStatus})` : 'verification gone';
  const what =
    m.channel === 'call'
      ? `CALL  to ${m.to} from ${m.callerId ?? m.from} (code ${m.code ?? '?'}: the last digits)`
      : m.channel === 'voice'
        ? `VOICE to ${m.to} from ${m.from}: "${m.text ?? ''}"`
        : `${m.channel === 'whatsapp' ? 'WHATSAPP' : m.channel === 'telegram' ? 'TELEGRAM' : 'SMS  '} to ${m.to} from ${m.from}: ${(m.text ?? '').replace(/\n/g, ' ')}`;
  return `${m.at}  ${what}  [${state}]  verification ${m.verificationId}\n`;
}
