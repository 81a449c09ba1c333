import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';

/**
 * The embedded database admits one process, so while the server runs the CLI hands it commands over a
 * unix socket in DATA_DIR (mode 0600: only the owner of the data may use it).
 */
export async function serveAdminSocket(
  socketPath: string,
  handle: (command: unknown) => Promise<unknown>,
): Promise<{ close: () => Promise<void> }> {
  if (await isListening(socketPath)) {
    throw new Error(`another server is already running on this DATA_DIR (${socketPath} answers)`);
  }
  fs.rmSync(socketPath, { force: true });
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
      handle(command).then(
        (result) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result)),
        () => res.writeHead(500).end(JSON.stringify({ ok: false, error: 'the command failed; see the server log' })),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  fs.chmodSync(socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
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
