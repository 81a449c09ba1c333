import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

/** Answers one operator command. */
export type AdminHandler = (command: unknown) => Promise<unknown>;

/** The admin socket of a server, held from before its database is opened. */
export interface AdminSocket {
  /** Starts answering commands; those that came earlier waited for this. */
  serve(handle: AdminHandler): void;
  close(): Promise<void>;
}

/**
 * The embedded database admits one process, so while the server runs the CLI hands it commands over a
 * unix socket in DATA_DIR (mode 0600: only the owner of the data may use it). The socket is also what tells a
 * second server that the first runs, so it is claimed first thing, before the database is opened: a second
 * process that opened the database beside a first one writing to it ended in `Aborted()` from WebAssembly.
 */
export async function claimAdminSocket(socketPath: string): Promise<AdminSocket> {
  const alreadyRunning = () => new Error(`another server is already running on this DATA_DIR (${socketPath} answers)`);
  let serve!: (handle: AdminHandler) => void;
  const handler = new Promise<AdminHandler>((resolve) => (serve = resolve));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let command: unknown;
      try {
        command = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end(JSON.stringify({ ok: false, error: 'not JSON' }));
        return;
      }
      handler.then((handle) => handle(command)).then(
        (result) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result)),
        () => res.writeHead(500).end(JSON.stringify({ ok: false, error: 'the command failed; see the server log' })),
      );
    });
  });
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.removeListener('error', reject);
        resolve();
      });
    });
  // The data folder, when the server is the first to use it: its owner's alone (store/private-folder.ts).
  fs.mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 });
  try {
    // Binding is the check: of two servers starting at once, only one can bind the path.
    await listen();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    if (await isListening(socketPath)) throw alreadyRunning();
    // A socket file left by a server that died: nothing answers on it.
    fs.rmSync(socketPath, { force: true });
    await listen();
  }
  fs.chmodSync(socketPath, 0o600);
  return {
    serve,
    close: () =>
      new Promise<void>((resolve) => {
        // Commands still waiting for a server that never started are told so.
        serve(async () => ({ ok: false, error: 'the server did not start' }));
        server.close(() => resolve());
        fs.rmSync(socketPath, { force: true });
      }),
  };
}

/** Sends a command to the running server; null when no server listens on the socket. */
export async function sendAdminCommand(socketPath: string, command: unknown): Promise<unknown> {
  if (!(await isListening(socketPath))) return null;
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method: 'POST', path: '/' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(command));
  });
}

function isListening(socketPath: string): Promise<boolean> {
  if (!fs.existsSync(socketPath)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
