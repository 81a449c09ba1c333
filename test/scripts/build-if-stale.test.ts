import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildIfStale, buildInputs, staleness } from '../../scripts/build-if-stale.mjs';

/** `npm start` builds only when a source is newer than the last build: checked on a small project and the real compiler. */
describe('build-if-stale', () => {
  let root: string;
  const write = (file: string, text: string, mtime?: Date) => {
    const full = path.join(root, file);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, text);
    if (mtime) fs.utimesSync(full, mtime, mtime);
  };
  /**
   * Time passes since the last build (rather than giving sources a time in the future, which a build never
   * catches up with): every input and the stamp move 10 s back, and the changed file gets a time 5 s ago, so
   * it is newer than the last build and older than the next one even when both fall in the same millisecond.
   */
  const later = () => {
    for (const file of [...buildInputs(root), 'dist/.build-stamp']) {
      const full = path.join(root, file);
      const past = new Date(fs.statSync(full).mtimeMs - 10_000);
      fs.utimesSync(full, past, past);
    }
    return new Date(Date.now() - 5_000);
  };

  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-build-'));
    write(
      'tsconfig.json',
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', strict: true, outDir: 'dist', rootDir: 'src', types: [] } }),
    );
    write('tsconfig.build.json', JSON.stringify({ extends: './tsconfig.json', include: ['src'] }));
    write('src/main.ts', 'export const answer: number = 41;\n');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('builds a project never built', () => {
    assert.equal(staleness(root), 'not built yet');
    assert.equal(buildIfStale(root), 'built');
    assert.match(fs.readFileSync(path.join(root, 'dist/main.js'), 'utf8'), /answer = 41/);
    assert.equal(staleness(root), null);
  });

  it('does not build again while nothing changed', () => {
    const stamp = path.join(root, 'dist/.build-stamp');
    const before = fs.statSync(stamp).mtimeMs;
    const output = fs.statSync(path.join(root, 'dist/main.js')).mtimeMs;
    const started = process.hrtime.bigint();
    assert.equal(buildIfStale(root), 'fresh');
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    assert.ok(ms < 200, `the check took ${ms} ms`);
    assert.equal(fs.statSync(stamp).mtimeMs, before);
    assert.equal(fs.statSync(path.join(root, 'dist/main.js')).mtimeMs, output);
  });

  it('builds again when a source changed', () => {
    write('src/main.ts', 'export const answer: number = 42;\n', later());
    assert.equal(staleness(root), `${path.join('src', 'main.ts')} changed`);
    assert.equal(buildIfStale(root), 'built');
    assert.match(fs.readFileSync(path.join(root, 'dist/main.js'), 'utf8'), /answer = 42/);
    assert.equal(staleness(root), null);
  });

  it('builds again when the compiler settings changed', () => {
    write('tsconfig.build.json', JSON.stringify({ extends: './tsconfig.json', include: ['src'] }), later());
    assert.equal(staleness(root), 'tsconfig.build.json changed');
    assert.equal(buildIfStale(root), 'built');
    assert.equal(staleness(root), null);
  });

  it('builds again when a source was added or removed, even with an old time', () => {
    write('src/extra.ts', 'export const extra = 1;\n', new Date('2020-01-01T00:00:00Z'));
    assert.equal(staleness(root), 'a source was added or removed');
    assert.equal(buildIfStale(root), 'built');
    assert.ok(fs.existsSync(path.join(root, 'dist/extra.js')));
    fs.rmSync(path.join(root, 'src/extra.ts'));
    assert.equal(staleness(root), 'a source was added or removed');
    assert.equal(buildIfStale(root), 'built');
    assert.equal(staleness(root), null);
  });

  it('builds when asked to (npm run build), and a compile error fails it', () => {
    assert.equal(buildIfStale(root, { force: true }), 'built');
    write('src/main.ts', 'export const answer: number = "not a number";\n', later());
    assert.throws(() => buildIfStale(root));
    assert.notEqual(staleness(root), null, 'a failed build leaves the next start to try again');
  });
});
