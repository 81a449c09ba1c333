import fs from 'node:fs';
import { settings } from '../src/config.js';

/**
 * The table of settings in docs/settings.md, made from the one schema in src/config.ts. With `--write docs/settings.md` it
 * replaces the table between the settings markers; otherwise it prints it.
 */
export function settingsTable(): string {
  const rows = Object.entries(settings).map(
    ([name, s]) => `| \`${name}\` | ${s.default === undefined ? '(unset)' : `\`${s.default}\``} | ${s.doc} |`,
  );
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

const [flag, file] = process.argv.slice(2);
if (flag === '--write' && file) {
  const text = fs.readFileSync(file, 'utf8');
  const replaced = text.replace(
    /<!-- settings:start -->[\s\S]*<!-- settings:end -->/,
    `<!-- settings:start -->\n${settingsTable()}\n<!-- settings:end -->`,
  );
  fs.writeFileSync(file, replaced);
} else if (process.argv[1]?.endsWith('settings-table.ts')) {
  process.stdout.write(`${settingsTable()}\n`);
}
