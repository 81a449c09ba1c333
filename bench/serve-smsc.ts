/**
 * A local SMSC for the providers section, in its own process so that it shares no event loop with the ESME
 * under test: the `smpp` package's own server, accepting any bind_transceiver and answering every submit_sm at
 * once with a message_id (no receipts). It notes when each submit_sm arrived (by destination_addr) on the
 * wall clock performance.timeOrigin + performance.now(), which the bench reads over a small HTTP control port:
 *   GET  /now    {now}: this process's clock, for the parent to measure the offset to its own
 *   POST /reset  forgets what was noted (?record=1 also notes each submit_sm's destination and time)
 *   GET  /log    {submits, binds, entries: [[destination_addr, at], ...]} since the last reset
 * Prints one JSON line {smppPort, controlUrl} once both listen. SMSC_SUBMIT_DELAY_MS: each submit_sm_resp goes out
 * that long after its submit_sm came (an SMSC that answers late).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createServer, type PDU, type Session } from 'smpp';

const now = () => performance.timeOrigin + performance.now();
const submitDelayMs = Number(process.env.SMSC_SUBMIT_DELAY_MS ?? 0);

let submits = 0;
let binds = 0;
let record = false;
let entries: [string, number][] = [];
let nextId = 0;
const sessions = new Set<Session>();

const smsc = createServer((session) => {
  sessions.add(session);
  // Answers go out as soon as they are written, as a real SMSC's do.
  session.socket.setNoDelay(true);
  session.on('error', () => session.destroy());
  session.on('close', () => sessions.delete(session));
  session.on('pdu', (pdu: PDU) => {
    switch (pdu.command) {
      case 'submit_sm': {
        const at = now();
        submits++;
        if (record) entries.push([String(pdu['destination_addr']), at]);
        const response = pdu.response({ message_id: `S${++nextId}` });
        if (submitDelayMs > 0) setTimeout(() => session.send(response), submitDelayMs);
        else session.send(response);
        return;
      }
      case 'bind_transceiver':
      case 'bind_transmitter':
      case 'bind_receiver':
        binds++;
        session.send(pdu.response({ system_id: 'BENCHSMSC' }));
        return;
      case 'enquire_link':
      case 'unbind':
        session.send(pdu.response());
        return;
      default:
        return;
    }
  });
});

const control = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (url.pathname === '/now') return json({ now: now() });
  if (url.pathname === '/reset') {
    submits = 0;
    binds = 0;
    entries = [];
    record = url.searchParams.get('record') === '1';
    return json({ ok: true });
  }
  if (url.pathname === '/log') return json({ submits, binds, entries });
  res.writeHead(404).end();
});
control.keepAliveTimeout = 60_000;

async function main(): Promise<void> {
  await new Promise<void>((resolve) => smsc.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  const smppPort = (smsc.address() as AddressInfo).port;
  const controlPort = (control.address() as AddressInfo).port;
  process.stdout.write(`${JSON.stringify({ smppPort: String(smppPort), controlUrl: `http://127.0.0.1:${controlPort}` })}\n`);
  const stop = () => {
    for (const s of sessions) s.destroy();
    control.closeAllConnections();
    control.close();
    smsc.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 1_000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`serve-smsc failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
