import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { buildInputs } from '../../scripts/build-if-stale.mjs';
import { settings } from '../../src/config.js';
import { repoRoot } from '../support/processes.js';

/**
 * The Dockerfile and compose.yaml, checked without a container engine: what they copy exists and is sent to the
 * builder, what the image runs is what the build makes, and the compose services find each other.
 * (scripts/container/build-local.sh and smoke-test.sh build and run them; they take minutes.)
 */
interface Instruction {
  readonly keyword: string;
  readonly args: string;
}
interface Stage {
  readonly from: string;
  readonly name: string | null;
  readonly instructions: Instruction[];
}

/** The Dockerfile's stages: comments dropped, continuation lines joined, instructions split by FROM. */
function dockerfileStages(text: string): { args: Instruction[]; stages: Stage[] } {
  const lines = text.split('\n').filter((l) => !/^\s*#/.test(l));
  const joined = lines.join('\n').replace(/\\\n/g, ' ');
  const args: Instruction[] = [];
  const stages: Stage[] = [];
  for (const line of joined.split('\n')) {
    const match = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!match?.[1] || match[2] === undefined) continue;
    const instruction = { keyword: match[1].toUpperCase(), args: match[2].trim() };
    if (instruction.keyword === 'FROM') {
      const [from = '', as, name] = instruction.args.split(/\s+/);
      stages.push({ from, name: as?.toUpperCase() === 'AS' && name ? name : null, instructions: [] });
    } else if (stages.length === 0) args.push(instruction);
    else stages.at(-1)?.instructions.push(instruction);
  }
  return { args, stages };
}

/** A COPY's options (--from=build), sources and destination. */
function copyParts(args: string): { from: string | null; sources: string[]; dest: string } {
  const words = args.split(/\s+/);
  const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length) ?? null;
  const paths = words.filter((w) => !w.startsWith('--'));
  const dest = paths.pop();
  assert.ok(dest !== undefined && paths.length > 0, `COPY ${args}`);
  return { from, sources: paths, dest };
}

/** Whether .dockerignore keeps a file (relative, with /) out of the build context: Docker's rules, last match wins. */
function ignoredBy(patterns: string[], file: string): boolean {
  const regex = (glob: string) =>
    new RegExp(
      `^${glob
        .replace(/^\/+|\/+$/g, '')
        .split(/(\*\*\/?|\*|\?)/)
        .map((part) => (part.startsWith('**') ? '(.*/)?' : part === '*' ? '[^/]*' : part === '?' ? '[^/]' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
        .join('')}$`,
    );
  const parts = file.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    const re = regex(negated ? pattern.slice(1) : pattern);
    if (prefixes.some((p) => re.test(p))) ignored = !negated;
  }
  return ignored;
}

function filesUnder(rel: string): string[] {
  const full = path.join(repoRoot, rel);
  if (!fs.statSync(full).isDirectory()) return [rel];
  return fs.readdirSync(full).flatMap((name) => filesUnder(path.posix.join(rel, name)));
}

const { args: globalArgs, stages } = dockerfileStages(fs.readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8'));
const dockerignore = fs
  .readFileSync(path.join(repoRoot, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l.length > 0 && !l.startsWith('#'));
const build = stages[0];
const runtime = stages.at(-1);
const all = (stage: Stage | undefined, keyword: string) => stage?.instructions.filter((i) => i.keyword === keyword) ?? [];
/**
 * Paths (relative to WORKDIR /app, no trailing /) a stage's COPYs put in place. A folder's contents go into
 * the destination; a file goes into a destination ending in / under its own name.
 */
const copiedInto = (stage: Stage | undefined) =>
  all(stage, 'COPY').flatMap((i) => {
    const { from, sources, dest } = copyParts(i.args);
    const target = dest.replace(/^\.\/?/, '').replace(/\/$/, '');
    return sources.map((s) => {
      const folder = s.endsWith('/') || (from === null && fs.statSync(path.join(repoRoot, s)).isDirectory());
      if (folder || !dest.endsWith('/')) return target;
      return path.posix.join(target, path.posix.basename(s));
    });
  });

describe('Dockerfile', () => {
  it('has a build stage and a runtime stage, both on NODE_IMAGE, a Node.js 24 image by default', () => {
    assert.ok(build && runtime && build !== runtime, 'two stages');
    const arg = globalArgs.find((a) => a.keyword === 'ARG' && a.args.startsWith('NODE_IMAGE='));
    assert.match(arg?.args ?? '', /^NODE_IMAGE=node:24[-.]/);
    for (const stage of stages) assert.equal(stage.from, '${NODE_IMAGE}');
    assert.equal(build.name, 'build');
  });

  it('copies from the context only files that exist and that .dockerignore lets through', () => {
    for (const stage of stages) {
      for (const { args } of all(stage, 'COPY')) {
        const { from, sources } = copyParts(args);
        if (from !== null) continue;
        for (const source of sources) {
          const rel = source.replace(/\/$/, '');
          assert.ok(fs.existsSync(path.join(repoRoot, rel)), `COPY ${rel}: no such file`);
          const sent = filesUnder(rel).filter((f) => !ignoredBy(dockerignore, f));
          assert.ok(sent.length > 0, `COPY ${rel}: .dockerignore leaves nothing of it`);
          if (sent.length < filesUnder(rel).length) assert.fail(`COPY ${rel}: .dockerignore drops some of its files`);
        }
      }
    }
    assert.ok(ignoredBy(dockerignore, 'node_modules/x/index.js') && ignoredBy(dockerignore, 'client/node_modules/y.js'));
    assert.ok(ignoredBy(dockerignore, 'dist/main.js') && ignoredBy(dockerignore, 'data/pgdata') && ignoredBy(dockerignore, '.git/HEAD'));
  });

  it('gives npm ci the package.json of every workspace in the lockfile', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { workspaces?: string[] };
    const ciAt = build?.instructions.findIndex((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args)) ?? -1;
    assert.ok(ciAt > 0, 'the build stage runs npm ci');
    const before = copiedInto({ from: '', name: null, instructions: build?.instructions.slice(0, ciAt) ?? [] });
    for (const file of ['package.json', 'package-lock.json', ...(pkg.workspaces ?? []).map((w) => `${w}/package.json`)]) {
      assert.ok(before.includes(file), `${file} is copied before npm ci`);
    }
  });

  it('runs what the build makes: CMD is the file tsconfig.build.json emits from src/main.ts', () => {
    const tsconfig = JSON.parse(fs.readFileSync(path.join(repoRoot, 'tsconfig.build.json'), 'utf8')) as {
      compilerOptions: { rootDir: string; outDir: string };
    };
    const cmd = JSON.parse(all(runtime, 'CMD').at(-1)?.args ?? 'null') as string[];
    assert.equal(cmd[0], 'node');
    const main = cmd[1] ?? '';
    const source = path.posix.join(tsconfig.compilerOptions.rootDir, path.posix.relative(tsconfig.compilerOptions.outDir, main)).replace(/\.js$/, '.ts');
    assert.equal(source, 'src/main.ts');
    assert.ok(fs.existsSync(path.join(repoRoot, source)));
    assert.ok(build?.instructions.some((i) => i.keyword === 'RUN' && i.args.includes('build-if-stale.mjs')), 'the build stage compiles');
  });

  it('copies from the build stage only what it has, and everything the image runs and its commands read', () => {
    const made = [...copiedInto(build), 'node_modules', 'dist'];
    const runtimeHas = copiedInto(runtime);
    for (const { args } of all(runtime, 'COPY')) {
      const { from, sources } = copyParts(args);
      if (from !== 'build') continue;
      for (const s of sources) assert.ok(made.includes(s.replace(/^\/app\//, '').replace(/\/$/, '')), `${s} is not in the build stage`);
    }
    // bin/otp-service.mjs imports ../scripts/build-if-stale.mjs; dist/http/api-reference.js reads package.json.
    const imports = fs.readdirSync(path.join(repoRoot, 'bin')).flatMap((f) =>
      [...fs.readFileSync(path.join(repoRoot, 'bin', f), 'utf8').matchAll(/from '(\.[^']+)'/g)].map((m) => path.posix.join('bin', m[1] ?? '')),
    );
    for (const needed of ['dist', 'node_modules', 'package.json', 'bin', ...imports]) {
      assert.ok(runtimeHas.includes(needed), `the runtime stage has ${needed}`);
    }
    // Without the build's inputs, build-if-stale finds "a source was added or removed" and bin/ would compile.
    const inputRoots = new Set(buildInputs(repoRoot).map((f) => f.split(path.sep)[0] ?? f));
    for (const input of inputRoots) assert.ok(runtimeHas.includes(input), `the runtime stage has ${input}, a build input`);
  });

  it('runs as a non-root user with a health check on /healthz, in production mode, on the port it exposes', () => {
    const user = all(runtime, 'USER').at(-1)?.args ?? 'root';
    assert.match(user, /^[1-9]\d*(:\d+)?$/, 'a numeric non-zero uid (Kubernetes runAsNonRoot can check it)');
    const healthcheck = all(runtime, 'HEALTHCHECK').at(-1)?.args ?? '';
    assert.match(healthcheck, /CMD \["node", "-e", .*\/healthz/);
    const env = all(runtime, 'ENV').map((i) => i.args).join(' ');
    assert.match(env, /NODE_ENV=production/);
    assert.match(env, /DATA_DIR=\/data\b/);
    assert.ok(all(runtime, 'VOLUME').some((i) => i.args.includes('/data')));
    const port = /PORT=(\d+)/.exec(env)?.[1] ?? settings.PORT.default;
    assert.ok(all(runtime, 'EXPOSE').some((i) => i.args.split(/\s+/).includes(port)), `EXPOSE ${port}`);
  });
});

describe('compose.yaml', () => {
  interface Service {
    build?: string;
    image?: string;
    environment?: Record<string, string>;
    ports?: string[];
    depends_on?: Record<string, { condition?: string }>;
    healthcheck?: { test?: string[] | string };
    volumes?: string[];
    stop_grace_period?: string;
  }
  const compose = parseYaml(fs.readFileSync(path.join(repoRoot, 'compose.yaml'), 'utf8')) as {
    services: Record<string, Service>;
    volumes?: Record<string, unknown>;
  };
  const service = compose.services['otp-service'];
  const postgres = compose.services.postgres;
  /** ${NAME:?message} and ${NAME:-default} as a value .env could give: letters and digits. */
  const interpolated = (value: string) => value.replace(/\$\{([A-Z_]+)(:[-?][^}]*)?\}/g, (_, name: string) => `x${name.toLowerCase()}`);

  it('builds the Dockerfile and publishes port 3000 on this machine only, where a proxy is the one way in', () => {
    assert.equal(service?.build, '.');
    assert.deepEqual(service?.ports, ['${OTP_BIND:-127.0.0.1}:${OTP_PORT:-3000}:3000']);
  });

  it('starts the service once PostgreSQL is healthy (pg_isready), its data in a named volume', () => {
    assert.equal(service?.depends_on?.postgres?.condition, 'service_healthy');
    assert.match(String(postgres?.healthcheck?.test), /pg_isready/);
    assert.match(postgres?.image ?? '', /^postgres:1[6-9]\b/);
    const volume = postgres?.volumes?.[0]?.split(':')[0] ?? '';
    assert.ok(compose.volumes && volume in compose.volumes, `${volume} is a named volume`);
  });

  it("points DATABASE_URL at the postgres service, with its user, password and database", () => {
    const url = new URL(interpolated(service?.environment?.DATABASE_URL ?? ''));
    const env = postgres?.environment ?? {};
    assert.equal(url.hostname, 'postgres');
    assert.equal(url.port || '5432', '5432');
    assert.equal(url.username, env.POSTGRES_USER);
    assert.equal(url.password, interpolated(env.POSTGRES_PASSWORD ?? ''));
    assert.equal(url.pathname, `/${env.POSTGRES_DB ?? ''}`);
  });

  it('gives the service longer to stop than it gives in-flight requests', () => {
    const grace = /^(\d+)s$/.exec(service?.stop_grace_period ?? '')?.[1];
    assert.ok(grace && Number(grace) * 1000 > Number(settings.SHUTDOWN_GRACE_MS.default));
  });
});
