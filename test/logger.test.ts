import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { logFormat } from '../src/logger.js';
import { repoRoot } from './support/processes.js';

/** `script` (util-linux) runs a command on a pseudo-terminal: stdout is then a TTY, as when a person runs npm start. */
const scriptSkip = fs.existsSync('/usr/bin/script') ? false : 'no /usr/bin/script to give the process a terminal';

const logOnce = `import { processLogger } from './dist/logger.js';
processLogger('info', process.env.NODE_ENV ?? 'development').info({ clientSecret: 'cs_secret_value', port: 3000 }, 'hello from the log');`;

function underTerminal(env: Record<string, string>): string {
  const command = `${process.execPath} --input-type=module -e "${logOnce.replace(/"/g, '\\"')}"`;
  return execFileSync('/usr/bin/script', ['-qfec', command, '/dev/null'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', TERM: 'dumb', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('the log format', () => {
  it('is readable in a terminal outside production, JSON otherwise', () => {
    assert.equal(logFormat(true, 'development'), 'pretty');
    assert.equal(logFormat(true, 'test'), 'pretty');
    assert.equal(logFormat(true, 'production'), 'json');
    assert.equal(logFormat(false, 'development'), 'json');
  });

  it('prints lines for people on a real terminal, secrets still censored', { skip: scriptSkip }, () => {
    const out = underTerminal({});
    assert.match(out, /INFO.*hello from the log/);
    assert.doesNotMatch(out, /^\{"level"/m);
    assert.match(out, /clientSecret.*\[redacted\]/);
    assert.ok(!out.includes('cs_secret_value'));
  });

  it('prints JSON on a terminal in production, and whenever stdout is not a terminal', { skip: scriptSkip }, () => {
    const production = underTerminal({ NODE_ENV: 'production' });
    assert.match(production, /^\{"level":30,.*"msg":"hello from the log"\}/m);
    const piped = spawnSync(process.execPath, ['--input-type=module', '-e', logOnce], { cwd: repoRoot, encoding: 'utf8' });
    const line = JSON.parse(piped.stdout.trim()) as Record<string, unknown>;
    assert.equal(line.msg, 'hello from the log');
    assert.equal(line.clientSecret, '[redacted]');
  });
});
