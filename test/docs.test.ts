import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import GithubSlugger from 'github-slugger';
import { marked, type Token, type Tokens } from 'marked';
import { settingsTable } from '../scripts/settings-table.js';
import { repoRoot } from './support/processes.js';

/**
 * Issue 23: the README is the front door and the rest lives in docs/, one page per topic. These checks keep that
 * shape: every relative link in the project's markdown reaches a file that exists and, with a #fragment, a heading
 * of that file (as GitHub makes anchors, github-slugger), so a moved heading cannot leave a dead link; every docs
 * page is reachable from the README and opens with what its reader can do after it.
 */
const read = (file: string) => fs.readFileSync(path.join(repoRoot, file), 'utf8');
const docsPages = fs
  .readdirSync(path.join(repoRoot, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
const markdownFiles = ['README.md', 'CHANGELOG.md', 'bench/README.md', 'client/README.md', ...docsPages].filter((f) =>
  fs.existsSync(path.join(repoRoot, f)),
);

/** Every token of a document, tables' cells and lists' items included. */
function* walk(tokens: readonly Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    const t = token as Token & { tokens?: Token[]; items?: Tokens.ListItem[]; header?: Tokens.TableCell[]; rows?: Tokens.TableCell[][] };
    if (t.tokens) yield* walk(t.tokens);
    if (t.items) yield* walk(t.items);
    if (t.header) for (const cell of t.header) yield* walk(cell.tokens);
    if (t.rows) for (const row of t.rows) for (const cell of row) yield* walk(cell.tokens);
  }
}

function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const token of walk(marked.lexer(read(file)))) {
    if (token.type === 'heading') anchors.add(slugger.slug((token as Tokens.Heading).text.replace(/`/g, '').replace(/\\(.)/g, '$1')));
  }
  return anchors;
}

function linksOf(file: string): string[] {
  const links: string[] = [];
  for (const token of walk(marked.lexer(read(file)))) {
    if (token.type === 'link') links.push((token as Tokens.Link).href);
    if (token.type === 'html') for (const m of token.raw.matchAll(/href="([^"]+)"/g)) links.push(m[1] ?? '');
  }
  return links;
}

describe('the docs', () => {
  it('every relative link reaches a file, and every #fragment a heading of it', () => {
    const dead: string[] = [];
    for (const file of markdownFiles) {
      for (const href of linksOf(file)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // http(s), mailto: not fetched here
        const [target = '', fragment] = href.split('#');
        const targetFile = target === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURI(target)));
        if (!fs.existsSync(path.join(repoRoot, targetFile))) {
          dead.push(`${file}: ${href} (no file ${targetFile})`);
          continue;
        }
        if (fragment !== undefined && targetFile.endsWith('.md') && !anchorsOf(targetFile).has(fragment)) {
          dead.push(`${file}: ${href} (no heading #${fragment} in ${targetFile})`);
        }
      }
    }
    assert.deepEqual(dead, []);
  });

  it('finds a dead link and a dead fragment (the check can fail)', () => {
    const anchors = anchorsOf('docs/sms.md');
    assert.ok(anchors.has('termii'));
    assert.ok(!anchors.has('no-such-heading'));
    assert.ok(anchorsOf('docs/sms.md').has('http-your-own-gateway'), 'punctuation is dropped as GitHub does');
  });

  it('the README is a front door: at most 250 lines, linking every docs page', () => {
    const readme = read('README.md');
    assert.ok(readme.split('\n').length <= 250, `README.md has ${readme.split('\n').length} lines`);
    const linked = new Set(linksOf('README.md').map((href) => href.split('#')[0]));
    assert.deepEqual(
      docsPages.filter((page) => !linked.has(page)),
      [],
      'each docs page is in the README map',
    );
  });

  it('each docs page opens with its title, then what its reader can do after it', () => {
    for (const page of docsPages) {
      const [title, ...rest] = marked.lexer(read(page)).filter((t) => t.type !== 'space');
      assert.equal(title?.type === 'heading' && (title as Tokens.Heading).depth, 1, `${page} starts with a # title`);
      assert.match(rest[0]?.raw ?? '', /^After (this page|these steps)/, `${page}: its first paragraph says what the reader can do after it`);
    }
  });

  it('the settings table in docs/settings.md is the one src/config.ts makes', () => {
    assert.ok(read('docs/settings.md').includes(settingsTable()), 'run: node --import tsx scripts/settings-table.ts --write docs/settings.md');
  });

  it('the README names the scripts it tells people to run', () => {
    const readme = read('README.md');
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    for (const script of ['start', 'test', 'bench']) {
      assert.ok(readme.includes(`npm ${script === 'test' || script === 'start' ? '' : 'run '}${script}`), script);
      assert.ok(pkg.scripts[script], `package.json has a ${script} script`);
    }
  });
});

describe('the words of the docs', () => {
  it('never name the internal interface document: a reader cannot look it up', () => {
    const internal = /\b(contract|seed)\b|original interface/i;
    const files = [...markdownFiles, '.env.example', 'client/openapi.json'];
    const found = files.flatMap((file) =>
      read(file)
        .split('\n')
        .map((line, i) => ({ file, line: i + 1, text: line }))
        .filter((l) => internal.test(l.text)),
    );
    assert.deepEqual(found, []);
  });
});
