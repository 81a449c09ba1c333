import path from 'node:path';
import { repoRoot, runNode, startNode, type NodeProcess, type Ran } from '../support/processes.js';

/** A service process run from source (`node --import tsx`), its log lines collected. */
export type ChildService = NodeProcess;

/** Starts `node --import tsx <entry> ...args` and waits until a log line carries `readyMessage`. */
export function startChild(
  entry: string,
  args: readonly string[],
  env: Record<string, string>,
  readyMessage: string,
  timeoutMs = 60_000,
): ReturnType<typeof startNode> {
  return startNode(['--import', 'tsx', path.join(repoRoot, entry), ...args], env, readyMessage, timeoutMs);
}

/** The server (src/main.ts), with the URL it listens on. */
export async function startServerChild(env: Record<string, string>): Promise<ChildService & { url: string }> {
  const started = await startChild('src/main.ts', [], { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }, 'otp-service listening');
  return { ...started, url: String(started.readyLine.url) };
}

/** Runs the CLI from source to the end. */
export function runCliFromSource(args: readonly string[], env: Record<string, string>): Promise<Ran> {
  return runNode(['--import', 'tsx', path.join(repoRoot, 'src/cli/main.ts'), ...args], env);
}

/** Kills a child and waits for it to be gone. */
export async function kill(service: ChildService, signal: NodeJS.Signals): Promise<number | null> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill(signal);
  return service.exited;
}
