import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { clientDocumentFile, clientTypesFile, documentSettings, documentText, typesText } from '../../scripts/client-types.js';
import { createHarness, type Harness } from '../support/harness.js';
import { repoRoot, runNode } from '../support/processes.js';

/**
 * The client package as it is shipped: its generated files are what the app's document makes today (else
 * `npm run generate -w client`), it builds with tsc, its entry resolves by name through `exports`, and the
 * example of docs/typed-client.md compiles against the built types.
 */

const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const regenerate = 'stale: run `npm run generate -w client` and commit the result';

let h: Harness;
before(async () => {
  h = await createHarness('pglite', { env: { DEV_INBOX: documentSettings.DEV_INBOX ?? 'false' } });
});
after(() => h?.close());

it('client/openapi.json and client/src/api.ts are what the app\'s own document makes', async () => {
  const document = await documentText(h.app);
  // Served as GET /openapi.json serves it.
  const served = await h.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.deepEqual(JSON.parse(document), served.json());
  assert.equal(fs.readFileSync(clientDocumentFile, 'utf8'), document, regenerate);
  assert.equal(fs.readFileSync(clientTypesFile, 'utf8'), await typesText(document), regenerate);
});

it('builds, resolves by name through its exports, and compiles the example of the docs', async () => {
  const built = await runNode([tsc, '-p', path.join(repoRoot, 'client', 'tsconfig.json')], {});
  assert.equal(built.code, 0, built.stdout + built.stderr);
  const pkg: unknown = JSON.parse(fs.readFileSync(path.join(repoRoot, 'client', 'package.json'), 'utf8'));
  assert.deepEqual(
    [Reflect.get(Object(pkg), 'type'), Reflect.get(Object(pkg), 'license'), Reflect.get(Object(pkg), 'engines')],
    ['module', 'MIT', { node: '>=20.18' }],
  );
  // By name, as a dependant would; a string the type checker does not resolve, since dist/ is built above.
  const specifier: string = '@otp-service/client';
  const entry: Record<string, unknown> = await import(specifier);
  for (const name of ['OtpClient', 'OtpServiceError', 'OtpAuthError', 'OtpConnectionError', 'verifyWebhook', 'WebhookVerificationError']) {
    assert.equal(typeof entry[name], 'function', name);
  }

  // The docs' example, type-checked as a project of its own would: importing the package by name.
  const page = fs.readFileSync(path.join(repoRoot, 'docs', 'typed-client.md'), 'utf8');
  const example = /^# The typed client\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(page)?.[1];
  assert.ok(example, 'docs/typed-client.md has a ts example');
  const dir = path.join(repoRoot, 'test-output', 'client-readme');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'example.ts'), example);
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'] },
      files: ['example.ts'],
    }),
  );
  const checked = await runNode([tsc, '-p', path.join(dir, 'tsconfig.json')], {});
  assert.equal(checked.code, 0, checked.stdout + checked.stderr);
});
