import { knownScopes } from '../domain/scopes.js';

/** One subcommand: its arguments and what it does. */
interface CommandHelp {
  readonly args: string;
  readonly about: string;
}

const settingsNote =
  'Uses the same database settings as the server (DATABASE_URL, or the embedded database in DATA_DIR), whether or not the server is running.';

/** Every command of `otp-service`, by group and subcommand ('' for a group that is a command itself). */
const commands: Readonly<Record<string, Readonly<Record<string, CommandHelp>>>> = {
  clients: {
    create: {
      args: '--name NAME --scopes "otp:send otp:verify" [--reveal-code true|false] [--json]',
      about:
        `Registers a client and prints its client id, client secret and webhook secret (the secrets only this once).\nScopes: ${knownScopes.join(' ')}.\n` +
        '--reveal-code: whether its answers and webhooks show the code (otp); default REVEAL_CODES_DEFAULT: shown in development, withheld with NODE_ENV=production.',
    },
    list: { args: '[--json]', about: 'Lists the clients: id, status, name, scopes, created (never a secret).' },
    show: { args: 'CLIENT_ID [--json]', about: 'One client, its settings (never a secret), and its spend today and this month beside its budgets.' },
    update: {
      args:
        'CLIENT_ID [--reveal-code true|false] [--default-webhook URL|none] [--allowed-countries NG,GH|all] [--app-name NAME|none] [--webotp-domain DOMAIN|none] [--android-app-hash HASH|none] [--default-locale LOCALE|none] [--fallback WHATSAPP,SEND_SMS|none] [--fallback-after SECONDS|none] [--captcha turnstile|hcaptcha|recaptcha|none --captcha-secret SECRET [--captcha-min-score 0.5] [--captcha-when always|throttled]] [--daily-spend-limit AMOUNT|none] [--monthly-spend-limit AMOUNT|none] [--decision-url URL|none [--decision-timeout-ms 800] [--decision-default allow|deny]] [--json]',
      about:
        "Changes a client's settings: whether answers and webhooks show the code (--reveal-code false: otp reads null), the webhook used when a create names none,\n" +
        'the countries it may verify numbers of, the app name ({app} and the default text), the WebOTP domain (adds the line "@domain #code"),\n' +
        'the Android SMS Retriever hash, the default locale of its texts, the default workflow: request types tried in turn when a create names no\n' +
        '`fallback`, each after the last failed or after --fallback-after seconds without a verify (FALLBACK_AFTER_SECONDS), and its CAPTCHA: creates then\n' +
        'need a captchaToken the provider accepts (the secret is stored for the checks, never logged, and shown only by its first characters; the minimum\n' +
        'score applies where the answer has one; --captcha-when throttled asks for a token only of a create a throttle would refuse: 403 CAPTCHA_REQUIRED),\n' +
        'and its budgets: what its sends may cost in a UTC day and month, in COST_CURRENCY (past one, its creates and resends are 429 RATE_LIMITED,\n' +
        'rule budget, until the period ends; a send of unknown price counts as the highest imported price of its channel),\n' +
        'and its decision webhook: before each send the rules allow, a POST signed as its webhooks are asks its backend, which answers\n' +
        '{ "decision": "allow" | "deny" } within --decision-timeout-ms (800); deny is 403 NUMBER_NOT_ALLOWED, factor customer_denied; a time-out,\n' +
        'an error or another answer applies --decision-default (allow).\n' +
        '`none` clears a setting. Every instance sees the change within 2 s on PostgreSQL.',
    },
    templates: {
      args: 'set CLIENT_ID [--channel voice] --locale fr "Votre code {app} : {code}" | list CLIENT_ID [--channel voice] | remove CLIENT_ID [--channel voice] --locale fr | preview CLIENT_ID [--channel voice] --locale fr "..."',
      about:
        'The SMS text per locale (BCP 47), with {code} (required), {minutes} and {app}. A template is checked when saved: it must hold {code},\n' +
        `and the text a user would get (longest code, app name, Android and WebOTP lines) must fit in 3 SMS parts; set says its encoding, parts and a sample.\n` +
        'With --channel voice: what a voice call says (VOICE_CALL), with {code} once (read digit by digit) and {app}, at most 200 characters.\n' +
        'preview checks a template as set would and says the same (with --channel voice, the sentence a call says), without saving it.',
    },
    'test-numbers': {
      args: 'add CLIENT_ID +2348000000001 --code 123456 | list CLIENT_ID | remove CLIENT_ID +2348000000001',
      about: 'Numbers with a fixed code: creates for them reach no provider and count toward no limit; verify checks the fixed code.',
    },
    disable: { args: 'CLIENT_ID [--json]', about: 'Disables a client: its tokens stop working and it gets no new ones.' },
    'rotate-secret': { args: 'CLIENT_ID [--json]', about: 'Gives a client a new client secret (printed once); the old one stops working.' },
    'rotate-webhook-secret': {
      args: 'CLIENT_ID [--json]',
      about: 'Gives a client a new webhook signing secret (printed once); the old one still verifies for a while.',
    },
    hooks: {
      args: 'CLIENT_ID [--enable | --disable] [--zitadel-signing-key KEY|-|none] [--json]',
      about:
        "Prints the addresses of the client's relays for auth servers (Supabase Auth's Send SMS Hook, Logto's HTTP SMS connector,\n" +
        "Ory Kratos' HTTP courier, ZITADEL's HTTP SMS provider), which start with PUBLIC_BASE_URL, and their one hook secret (v1,whsec_...).\n" +
        "A client's relays are off until --enable makes the secret; --disable turns them off (the secret and ZITADEL's key are forgotten).\n" +
        'The relays take only a client that holds otp:send. clients rotate-hook-secret replaces the secret.\n' +
        '--zitadel-signing-key keeps the signing key ZITADEL showed when its HTTP SMS provider was added (ZITADEL makes it),\n' +
        'to check its ZITADEL-Signature with (- reads it from stdin, none clears it); given again, the new key replaces the old.',
    },
    'rotate-hook-secret': {
      args: 'CLIENT_ID [--json]',
      about: "Gives a client's relays a new hook secret (printed); the old one is still taken for 24 hours, so the auth server can be given the new one without a gap.",
    },
  },
  webhooks: {
    list: {
      args: '[--status pending|delivered|failed|none] [--verification VERIFICATION_ID] [--limit N] [--json]',
      about: 'Lists webhook events, newest first, with their delivery state.',
    },
    show: { args: 'EVENT_ID [--json]', about: 'One event (its webhook-id) with every delivery attempt.' },
    replay: {
      args: 'EVENT_ID [--json]',
      about: 'Sends an event again now, with a fresh retry schedule (its earlier attempts are kept).',
    },
  },
  blocks: {
    list: {
      args: '[--json]',
      about:
        'Lists the prefixes (a number less its last 3 digits) blocked by prefix velocity (PREFIX_LIMIT_COUNT), the countries throttled to the prefix limit for their low conversion through a provider, and the clients throttled for theirs across all countries (MIN_CONVERSION), with when each ends.',
    },
    lift: {
      args: 'PREFIX|COUNTRY|CLIENT_ID [--json]',
      about:
        "Ends a prefix's block (+2348031234), a country's throttle (NG, every provider) or a client's (its id) now; creates towards it, and a country's or client's conversion, count afresh from now.",
    },
  },
  lists: {
    'block add': {
      args: 'VALUE [--client CLIENT_ID] [--note TEXT] [--json]',
      about:
        'Blocks a number (+2348030000001) or every number starting with those digits (+2348030): creates towards it are refused with 403 NUMBER_NOT_ALLOWED\n' +
        '(rule blocked). Service-wide without --client. Running servers see the change within 2 s on PostgreSQL.',
    },
    'block remove': { args: 'VALUE [--client CLIENT_ID] [--json]', about: 'Undoes a block (the same value and client).' },
    'allow add': {
      args: 'VALUE [--client CLIENT_ID] [--note TEXT] [--json]',
      about:
        'Lets a number (or the numbers a prefix starts) past the per-number limits and cool-down, prefix velocity, the signal limits and conversion throttling;\n' +
        'never past the daily quota, the CAPTCHA, countries, number types or blocks. Service-wide without --client.',
    },
    'allow remove': { args: 'VALUE [--client CLIENT_ID] [--json]', about: 'Undoes an allow entry (the same value and client).' },
    show: { args: '[--json]', about: 'Every block and allow entry; --json: { blocks: [{ value, clientId, note, createdAt }], allows: [...] }.' },
  },
  rules: {
    list: {
      args: '[--json]',
      about:
        'Every risk rule with the factor it names when it objects to a send, its mode for every client and the clients with their own;\n' +
        '--json: [{ rule, factor, mode, clients: { CLIENT_ID: mode } }].',
    },
    set: {
      args: 'RULE enforce|shadow|off [--client CLIENT_ID] [--json]',
      about:
        'enforce: the rule refuses the sends it objects to (every rule does by default). shadow: it refuses nothing, and the sends it would have\n' +
        'refused carry its factor with mode shadow (verdict shadow_block on the verification). off: it is not asked. Service-wide without\n' +
        "--client; a client's own mode wins over the service-wide one. Running servers follow within 2 s on PostgreSQL.",
    },
  },
  verdicts: {
    '': {
      args: '[--from YYYY-MM-DD] [--to YYYY-MM-DD] [--client CLIENT_ID] [--json]',
      about:
        'Per risk rule: the creates it refused, the sends it would have refused in shadow mode, and how many of those numbers had a code verified\n' +
        'later (a shadowed send its own code; a refused create a later one of the same number and client): a rule whose refused users verify\n' +
        'refuses real people. Days as costs takes them (the last 7 by default). --json: [{ rule, factor, refused, shadowed, verifiedLater }].',
    },
  },
  routes: {
    set: {
      args: 'CHANNEL DESTINATION PROVIDER[,PROVIDER...] [--weights W[,W...] | --policy best] [--failover-after SECONDS] [--json]',
      about:
        'Sends CHANNEL (sms, call, whatsapp, voice, telegram) to DESTINATION through these providers, in failover order. DESTINATION is a country (NG),\n' +
        '+ and the start of a number (+23480) or default; a number takes its longest matching prefix, then its country, then default, then the\n' +
        "channel's provider setting (SMS_PROVIDER...). Each provider must be in that setting here (exit 2 otherwise). Running servers follow within 2 s.\n" +
        '--weights 80,20: each verification goes first through a provider drawn by these weights (about four in five through the first), then the others in order.\n' +
        '--failover-after 20: a code a provider took but did not report DELIVERED within 20 s, its verification still pending, goes out once more\n' +
        'through the next provider (for providers that send delivery receipts; a later receipt is still recorded on its own send).\n' +
        '--policy best: the first provider is drawn by shares that follow the last hour of each provider on this route (sends delivered and codes\n' +
        'verified): the best takes all but 5 % for each other provider, which keeps it measured, and a provider whose circuit is open takes none.',
    },
    remove: { args: 'CHANNEL DESTINATION [--json]', about: "Removes a route: the destination's numbers take the next matching one." },
    list: {
      args: '[--json]',
      about:
        "Every route, and each channel's provider setting where no default route replaces it; --json: [{ channel, destination, providers,\n" +
        'weights, failoverAfterSeconds, policy, source, shares? }] (source: route, or settings; shares, on a best route: [{ provider, perMille,\n' +
        'score, why, sends, delivered, verified }], why: best, floor or circuit open).',
    },
  },
  prices: {
    import: {
      args: 'FILE.csv [--json]',
      about:
        'Adds or replaces prices from a CSV file (- reads standard input): a header line provider,channel,destination,currency,price, then a\n' +
        'line per price (twilio,sms,default,USD,0.0079 and smpp,sms,NG,USD,0.0031). DESTINATION is matched as routes are (+23480, NG, default);\n' +
        'the currency must be COST_CURRENCY; the price is per message or call, a decimal (0.0125). A line wrong: nothing changes (exit 2, each\n' +
        "line named). A send's cost is the provider's reported price when it gives one, else this price, else unknown. Running servers follow within 2 s.",
    },
    list: { args: '[--json]', about: 'Every imported price; --json: [{ provider, channel, destination, currency, price }].' },
    remove: { args: 'PROVIDER CHANNEL DESTINATION [--json]', about: "Removes a price: that destination's sends take the next matching one." },
  },
  costs: {
    '': {
      args: '[--by day|country|provider|client|route] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--json]',
      about:
        'What sends cost, in COST_CURRENCY, per UTC day of the send (the default), country, provider, client or route (channel and destination):\n' +
        'sends a provider took, verifications verified, cost, cost per verified code, and sends of unknown price (not in the cost). Both days\n' +
        'included; by default the last 7 days; at most 366. --json: [{ <by>: value, sends, verified, cost, costPerVerified, unknownSends }].',
    },
  },
  stats: {
    '': {
      args: '[--client CLIENT_ID | --by-provider] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--json]',
      about:
        'Traffic per UTC day and country, as GET /v1/stats answers it: sends (creates and resends), verifications delivered, verifications verified;\n' +
        'test numbers left out. Both days included; by default the last 7 days, today included; at most 366 days.\n' +
        "--client: that client's only; without it every client's, each row naming its client. --by-provider: every client's, also per provider\n" +
        'of the latest send (a row\'s provider is null while none took it). --json: one object a line.',
    },
  },
  messages: {
    '': {
      args: '[--to NUMBER] [--limit N] [--follow] [--json]',
      about:
        'Prints the SMS, WhatsApp messages and dropped calls the log provider "sent" (the codes a developer needs), oldest of the latest N (default 20) first, with each verification\'s state.\n' +
        '--to: only those to this E.164 number; --follow: keep printing new ones until interrupted;\n' +
        '--json: one object a line, { at, channel, to, from, text | callerId, verificationId, provider, testNumber }.',
    },
  },
  whatsapp: {
    'template create': {
      args: '[--language en_US] [--one-tap PACKAGE:SIGNATURE_HASH] [--json]',
      about:
        'Asks Meta to create the authentication template WHATSAPP_TEMPLATE (category AUTHENTICATION: the security line, a footer with the\n' +
        'code lifetime from OTP_TTL_SECONDS, and a COPY_CODE button, or with --one-tap an Android ONE_TAP autofill button for that app) in the\n' +
        "WhatsApp Business Account META_WABA_ID, and prints Meta's answer. Needs META_ACCESS_TOKEN and META_WABA_ID; no database.",
    },
    'template list': {
      args: '[--json]',
      about: "Lists the account's templates with their language, category and status (APPROVED, PENDING, REJECTED) as Meta answers.",
    },
  },
  operators: {
    create: {
      args: '--email EMAIL [--json]',
      about:
        'Makes a console operator (CONSOLE=true) and prints a one-time link, valid for 24 hours and usable once, where they set\n' +
        'a password and may add a passkey. The link starts with CONSOLE_ORIGIN (or PUBLIC_BASE_URL, or http://localhost:PORT).',
    },
    list: { args: '[--json]', about: 'Every operator: id, email, whether a password is set, passkeys, when made and disabled.' },
    disable: { args: 'OPERATOR_ID [--json]', about: 'Disables an operator: their sessions end at once and they cannot sign in again.' },
    link: {
      args: 'OPERATOR_ID [--json]',
      about: 'A new one-time link for an operator who lost their password (24 hours, once); the old password works until it is used.',
    },
  },
  verifications: {
    find: {
      args: 'ID|NUMBER|REFERENCE [--json]',
      about:
        "Finds verifications, whichever client made them, by id, by number (E.164, the newest 50) or by reference, each with its whole life:\n" +
        'state, sends and delivery attempts, wrong codes tried, and its webhook events with every delivery attempt. Never the code.',
    },
  },
  providers: {
    '': {
      args: '[--json]',
      about:
        "Each channel's providers in failover order: circuit state (open: skipped after 5 transient failures in a row, in the process asked),\n" +
        'sends answered and their mean answer time since that process started, and the last 24 hours\' verifications they carried and delivered.',
    },
  },
  audit: {
    '': {
      args: '[--limit N] [--json]',
      about:
        'The newest N (default 50) changes made through the console or this command: when, who (operator:EMAIL or cli), the action, what it was on,\n' +
        'and how it ended. Never a secret. --json: one array of { at, actor, action, target, outcome }.',
    },
  },
  erase: {
    '': {
      args: '--phone +2348031234567 [--client CLIENT_ID] [--json]',
      about:
        "Removes every trace of a number (of one client, or of all): its verifications keep only the number's prefix (for the counts that\n" +
        'protect the service) and read 404 from then on; their codes, references, signals, texts sent and webhook events go; lookups of the number\n' +
        'go; a block or allow list entry for it stays (it must still block) without its note. Prints what it removed. Pending ones end, nothing sent.',
    },
  },
  worker: { '': { args: '', about: 'Runs the background workers (webhook delivery included), no HTTP, until SIGTERM or SIGINT.' } },
  backup: {
    '': {
      args: '--to FILE [--json]',
      about:
        'Writes every client, verification, webhook event, send job and token signing key to FILE (gzip, readable by its owner only: keep it as you keep\n' +
        'the database), from one consistent snapshot, while the server runs and serves. Never overwrites a file.',
    },
  },
  restore: {
    '': {
      args: '--from FILE [--json]',
      about:
        'Writes a backup into an empty database (the embedded one in a new DATA_DIR, or DATABASE_URL), all of it or nothing: clients keep their secrets,\n' +
        'tokens signed before still verify, pending webhooks and sends carry on when the server starts. A backup of an older version is brought up to date.',
    },
  },
  'move-to-postgres': {
    '': {
      args: 'DATABASE_URL [--json]',
      about:
        'Copies the embedded database (DATA_DIR) into an empty PostgreSQL database, as a backup and restore would, while the server runs;\n' +
        'then stop the server, set DATABASE_URL and start it: the same clients, secrets and verifications carry on. Verifications made between\n' +
        'the copy and the stop are not in it: stop the server first for a move that misses nothing.',
    },
  },
};

function line(group: string, action: string, help: CommandHelp): string {
  return `  ${[group, action, help.args].filter(Boolean).join(' ')}`;
}

/** The whole usage, one line per command. */
export function usage(): string {
  const lines = Object.entries(commands).flatMap(([group, actions]) =>
    Object.entries(actions).map(([action, help]) => line(group, action, help)),
  );
  return `usage: otp-service <command> [options]\n\n${lines.join('\n')}\n\n` +
    `otp-service <command> --help says more about one command.\n${settingsNote}\n`;
}

/** Help for a group (`clients --help`) or one command (`clients create --help`); the whole usage when unknown. */
export function helpFor(group: string | undefined, action: string | undefined): string {
  const actions = group !== undefined && isGroup(group) ? commands[group] : undefined;
  if (!group || !actions) return usage();
  const one = Object.hasOwn(actions, action ?? '') ? actions[action ?? ''] : undefined;
  if (one) return `usage: otp-service${line(group, action ?? '', one).slice(1)}\n\n${one.about}\n\n${settingsNote}\n`;
  const lines = Object.entries(actions).map(([a, help]) => `${line(group, a, help)}\n      ${help.about.replace(/\n/g, '\n      ')}`);
  return `usage: otp-service ${group} <command> [options]\n\n${lines.join('\n')}\n\n${settingsNote}\n`;
}

/** Whether `otp-service <group>` is a command or a group of commands. */
export function isGroup(group: string): boolean {
  return Object.hasOwn(commands, group);
}
