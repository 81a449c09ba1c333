// Preloaded (node --require) into helper servers a test starts, such as Prism: the helper ends when its stdin
// closes, which happens when the test stops it or when the test process ends in any way, and after a hard
// limit whatever happens, so that no helper outlives its test.
'use strict';
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
setTimeout(() => process.exit(0), Number(process.env.HELPER_MAX_LIFETIME_MS ?? 600_000)).unref();
