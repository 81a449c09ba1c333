import { built, runNode, startNode, type NodeProcess, type Ran } from '../support/processes.js';

/** A service process (the build's server or command), its log lines collected. */
export type ChildService = NodeProcess;

/** Starts `node dist/<module>.js ...args` and waits until a log line carries `readyMessage`. */
export function startChild(
  module: 'main' | 'cli/main',
  args: readonly string[],
  env: Record<string, string>,
  readyMessage: string,
  timeoutMs = 60_000,
): ReturnType<typeof startNode> {
  return startNode([built(module), ...args], env, readyMessage, timeoutMs);
}

/** The server (dist/main.js), with the URL it listens on. */
export async function startServerChild(env: Record<string, string>): Promise<ChildService & { url: string }> {
  const started = await startChild('main', [], { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }, 'otp-service listening');
  return { ...started, url: String(started.readyLine.url) };
}

/** Runs the command (dist/cli/main.js) to the end. */
export function runCliFromBuild(args: readonly string[], env: Record<string, string>): Promise<Ran> {
  return runNode([built('cli/main'), ...args], env);
}

/** Kills a child and waits for it to be gone. */
export async function kill(service: ChildService, signal: NodeJS.Signals): Promise<number | null> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill(signal);
  return service.exited;
}
