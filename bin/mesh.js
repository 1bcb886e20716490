#!/usr/bin/env node
// The `mesh` command. Sources are TypeScript; tsx compiles them on load so that a fresh
// clone works right after `npm ci`, with no separate build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
