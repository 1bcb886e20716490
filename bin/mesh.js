#!/usr/bin/env node
// The `mesh` command. It runs the compiled JavaScript in dist/ (built by `npm ci`, `npm start`
// and the test set-up); when dist/ is missing or older than the sources — while you edit — it
// compiles the TypeScript sources on load with tsx instead, slower but always current.
// MESH_DIST=1 runs dist/ as it is: the tests build it once and must not fall back to tsx when
// a source changes while they run.
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { distIsFresh } from './dist-state.js';

// Every command but `mesh serve` does one piece of work and exits. On the embedded database most
// of that is PostgreSQL compiled to WebAssembly, which V8 compiles twice by default: quickly, then
// again optimized for the functions that run hot; a short process never lives to use the second
// (over a third of its CPU time went to it). A server keeps both tiers. Set before anything is
// compiled.
if (process.argv[2] !== 'serve') setFlagsFromString('--liftoff-only');

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
