/**
 * The development inbox page: one self-contained document (no CDN, nothing fetched but its own event stream),
 * a phone per number showing what the log provider "sent" to it, newest first, kept up to date from
 * `GET /dev/inbox/events`. The script builds every element with textContent, never HTML from data, and runs
 * under a Content-Security-Policy that admits only its own nonce'd script and style.
 */
export function devInboxPage(nonce: string, limit: number): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Development inbox · otp-service</title>
<style nonce="${nonce}">${style}</style>
</head>
<body data-limit="${limit}">
<header>
  <h1>Development inbox</h1>
  <p>What the <code>log</code> provider “sent”: nothing left this machine. Newest first, the latest ${limit}.</p>
  <p id="connection" class="connection connecting" role="status">connecting…</p>
</header>
<main id="phones" aria-live="polite"></main>
<p id="empty" class="empty">No messages yet. Create a verification (<code>POST /v1/otp/request</code>) and it appears here.</p>
<script nonce="${nonce}">${script}</script>
</body>
</html>
`;
}

const style = `
:root { color-scheme: light dark; --bg: #eef0f4; --ink: #1c2430; --muted: #5d6878; --phone: #11151c; --screen: #fbfbfd;
  --bubble: #e4e8ef; --mark: #ffe066; --ok: #1f8f4e; --bad: #c0392b; --wait: #b7791f; --off: #7b8494; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --ink: #e6edf3; --muted: #9aa5b4; --phone: #000; --screen: #161b22;
  --bubble: #222a35; --mark: #8a6d00; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--ink); }
header { padding: 20px 28px 4px; }
h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 2px 0; color: var(--muted); }
.connection::before { content: "●"; margin-right: 6px; }
.connection.live { color: var(--ok); }
.connection.connecting { color: var(--wait); }
.connection.lost { color: var(--bad); }
main { display: flex; flex-wrap: wrap; gap: 28px; padding: 16px 28px 40px; align-items: flex-start; }
.empty { padding: 0 28px; color: var(--muted); }
.empty.hidden { display: none; }
.phone { width: 300px; background: var(--phone); border-radius: 38px; padding: 14px 12px 22px; box-shadow: 0 8px 24px rgba(0,0,0,.25); }
.phone .notch { width: 110px; height: 18px; margin: 0 auto 8px; background: #000; border-radius: 0 0 12px 12px; }
.screen { background: var(--screen); border-radius: 26px; min-height: 380px; max-height: 560px; overflow-y: auto; padding: 10px 10px 14px; }
.number { text-align: center; font-weight: 600; padding: 6px 0 10px; border-bottom: 1px solid var(--bubble); margin-bottom: 10px;
  font-variant-numeric: tabular-nums; }
.messages { list-style: none; margin: 0; padding: 0; }
.item { margin: 0 0 12px; }
.bubble { background: var(--bubble); border-radius: 16px 16px 16px 4px; padding: 8px 11px; word-wrap: break-word; }
.from { font-size: 12px; color: var(--muted); margin-bottom: 2px; }
.whatsapp { background: #dcf8c6; color: #111; white-space: pre-line; }
.whatsapp .from { color: #075e54; font-weight: 600; }
.whatsapp .copy { display: block; text-align: center; color: #027eb5; border-top: 1px solid rgba(0,0,0,.1); margin-top: 6px; padding-top: 5px; }
.call { border-radius: 14px; border: 1px solid var(--bubble); padding: 8px 11px; }
.call .title { font-weight: 600; }
.call .caller { font-variant-numeric: tabular-nums; font-size: 17px; letter-spacing: .5px; }
.call .said { font-style: italic; margin: 4px 0; }
mark { background: var(--mark); color: inherit; border-radius: 4px; padding: 0 3px; font-weight: 700; letter-spacing: 1px; }
.meta { display: flex; gap: 6px; align-items: center; font-size: 12px; color: var(--muted); margin-top: 4px; flex-wrap: wrap; }
.badge { border-radius: 10px; padding: 1px 8px; color: #fff; font-weight: 600; font-size: 11px; }
.badge.PENDING { background: var(--wait); }
.badge.SUCCESS { background: var(--ok); }
.badge.FAILED { background: var(--bad); }
.badge.EXPIRED, .badge.UNKNOWN { background: var(--off); }
.delivery { border: 1px solid var(--muted); border-radius: 10px; padding: 0 7px; font-size: 11px; }
`;

// Plain browser JavaScript (no build step): the page's only script.
const script = `
'use strict';
const limit = Number(document.body.dataset.limit) || 200;
const messages = new Map();
const states = new Map();
const phones = document.getElementById('phones');
const empty = document.getElementById('empty');
const connection = document.getElementById('connection');

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** text with the first occurrence of mark in a <mark>. */
function marked(parent, text, mark, fromEnd) {
  const at = !mark ? -1 : fromEnd ? (text.endsWith(mark) ? text.length - mark.length : -1) : text.indexOf(mark);
  if (at < 0) { parent.append(text); return parent; }
  parent.append(text.slice(0, at), el('mark', 'code', mark), text.slice(at + mark.length));
  return parent;
}

function badges(message) {
  const meta = el('div', 'meta');
  meta.append(el('time', '', new Date(message.at).toLocaleTimeString()));
  const state = states.get(message.verificationId) || message.state;
  const status = state ? state.status : 'UNKNOWN';
  const badge = el('span', 'badge ' + status, status);
  badge.dataset.status = status;
  meta.append(badge);
  if (state) meta.append(el('span', 'delivery', state.deliveryStatus));
  return meta;
}

function item(message) {
  const li = el('li', 'item');
  li.dataset.messageId = String(message.id);
  li.dataset.verificationId = message.verificationId;
  li.dataset.channel = message.channel;
  if (message.channel === 'call') {
    const call = el('div', 'call');
    call.append(el('div', 'title', 'Missed call'));
    const code = message.callerId && message.code && message.callerId.endsWith(message.code) ? message.code : null;
    call.append(marked(el('div', 'caller'), message.callerId || message.from, code, true));
    li.append(call);
  } else if (message.channel === 'voice') {
    const call = el('div', 'call voice');
    call.append(el('div', 'title', 'Call from ' + message.from));
    call.append(el('div', 'said', '\u201c' + (message.text || '') + '\u201d'));
    if (message.code) call.append(marked(el('div', 'heard'), 'Code heard: ' + message.code, message.code, true));
    li.append(call);
  } else {
    // A WhatsApp authentication message: the business's number, Meta's fixed text and its copy-code button.
    const whatsapp = message.channel === 'whatsapp';
    const bubble = el('div', whatsapp ? 'bubble whatsapp' : 'bubble');
    bubble.append(el('div', 'from', whatsapp ? 'WhatsApp · ' + message.from : message.from));
    bubble.append(marked(el('div', 'text'), message.text || '', message.code, false));
    if (whatsapp) bubble.append(el('span', 'copy', 'Copy code'));
    li.append(bubble);
  }
  li.append(badges(message));
  return li;
}

function render() {
  const newest = [...messages.values()].sort((a, b) => b.id - a.id).slice(0, limit);
  const byNumber = new Map();
  for (const m of newest) {
    if (!byNumber.has(m.to)) byNumber.set(m.to, []);
    byNumber.get(m.to).push(m);
  }
  const cards = [];
  for (const [number, list] of byNumber) {
    const phone = el('section', 'phone');
    phone.dataset.phone = number;
    phone.setAttribute('aria-label', 'Phone ' + number);
    phone.append(el('div', 'notch'));
    const screen = el('div', 'screen');
    screen.append(el('div', 'number', number));
    const ul = el('ul', 'messages');
    for (const m of list) ul.append(item(m));
    screen.append(ul);
    phone.append(screen);
    cards.push(phone);
  }
  phones.replaceChildren(...cards);
  empty.classList.toggle('hidden', newest.length > 0);
  for (const id of [...messages.keys()]) if (!newest.some((m) => m.id === id)) messages.delete(id);
}

function add(message) {
  messages.set(message.id, message);
  if (message.state) states.set(message.verificationId, message.state);
}

function connect() {
  const events = new EventSource('./inbox/events');
  events.addEventListener('open', () => {
    connection.textContent = 'live';
    connection.className = 'connection live';
  });
  events.addEventListener('error', () => {
    connection.textContent = 'reconnecting…';
    connection.className = 'connection lost';
  });
  events.addEventListener('snapshot', (e) => {
    const data = JSON.parse(e.data);
    messages.clear();
    states.clear();
    for (const m of data.messages) add(m);
    render();
  });
  events.addEventListener('sent', (e) => {
    add(JSON.parse(e.data));
    render();
  });
  events.addEventListener('state', (e) => {
    const state = JSON.parse(e.data);
    states.set(state.verificationId, state);
    render();
  });
}
connect();
`;
