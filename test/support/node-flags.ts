/**
 * V8 flags for every node process of the tests: the test files (scripts/run-tests.ts) and the servers and commands
 * they start (processes.ts). `--liftoff-only` runs WebAssembly with V8's baseline compiler alone: the optimizing
 * tier recompiles PGlite's hot functions in the background, which pays off over a server's hours and costs a
 * test process a second and a half of processor for a database it uses for seconds (a third of a typical file's
 * processor time). The code runs the same; only how fast it runs differs.
 */
export const testNodeFlags: readonly string[] = ['--liftoff-only'];
