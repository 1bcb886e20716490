#!/usr/bin/env node
// The `mesh` command. It runs the compiled JavaScript in dist/ (built by `npm ci`, `npm start`
// and the test set-up); when dist/ is missing or older than the sources — while you edit — it
// compiles the TypeScript sources on load with tsx instead, slower but always current.
// MESH_DIST=1 runs dist/ as it is: the tests build it once and must not fall back to tsx when
// a source changes while they run.
import { fileURLToPath } from 'node:url';
import { distIsFresh } from './dist-state.js';

const root = fileURLToPath(new URL('..', import.meta.url));
let main;
if (process.env.MESH_DIST === '1' || distIsFresh(root)) {
  ({ main } = await import('../dist/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
