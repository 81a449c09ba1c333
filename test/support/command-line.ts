import { runCommandLine } from '../../src/cli/command-line.js';
import type { Ran } from './processes.js';

/**
 * Runs `otp-service <args>` in this process, with `env` as its whole environment and `input` as its stdin: what
 * the command does and prints, its exit code, for the tests where the command is the means and not the process.
 * A command process costs a second or two of processor (node, the service's modules, the embedded database's
 * WebAssembly), which this process has already paid; the CLI's own tests (test/cli/cli.test.ts) run the real one.
 */
export async function runCommand(args: readonly string[], env: Record<string, string>, input = ''): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  const code = await runCommandLine(args, {
    env: { ...env },
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
    readStdin: () => input,
    // Nothing run here follows or waits for a signal: such a command runs as a process (test/cli/messages.test.ts).
    stopRequested: () => new Promise(() => undefined),
  });
  return { code, stdout, stderr };
}
