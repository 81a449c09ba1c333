import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { settingsTable } from '../scripts/settings-table.js';
import { repoRoot } from './support/processes.js';

const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

it('README settings table is the one src/config.ts makes', () => {
  assert.ok(readme.includes(settingsTable()), 'run: node --import tsx scripts/settings-table.ts --write README.md');
});

it('README names the scripts it tells people to run', () => {
  for (const script of ['start', 'test', 'bench']) {
    assert.ok(readme.includes(`npm ${script === 'test' || script === 'start' ? '' : 'run '}${script}`), script);
    assert.ok(pkg.scripts[script], `package.json has a ${script} script`);
  }
});
