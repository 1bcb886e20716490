#!/usr/bin/env node
/*
 * `npm test`'s first step: the Debian packages the suite runs for real — bubblewrap (the local
 * workspace sandbox), chromium (the browser tests) and git (the GitHub flow). Present: nothing is
 * printed. Missing and run by root with apt-get: they are installed. Otherwise the run stops here
 * with one line naming the command, instead of failing dozens of tests with `spawn bwrap ENOENT`.
 */
import { spawnSync } from 'node:child_process';

const NEEDED = [
  ['bwrap', 'bubblewrap'],
  ['chromium', 'chromium'],
  ['git', 'git'],
];

const has = (command) =>
  spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

const missing = NEEDED.filter(([command]) => !has(command)).map(([, pkg]) => pkg);
if (missing.length === 0) process.exit(0);

const install = `apt-get install -y ${missing.join(' ')}`;
const root = process.getuid?.() === 0;
if (!root || !has('apt-get')) {
  console.error(
    `npm test needs the Debian packages ${missing.join(', ')}: run \`sudo ${install}\`, then npm test again`,
  );
  process.exit(1);
}

console.error(`npm test: installing ${missing.join(', ')} (${install})`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
const run = (args) => spawnSync('apt-get', args, { stdio: 'inherit', env }).status === 0;
const installed =
  run(['install', '-y', ...missing]) || (run(['update']) && run(['install', '-y', ...missing]));
if (!installed || NEEDED.some(([command]) => !has(command))) {
  console.error(`npm test: could not install ${missing.join(', ')}; run \`${install}\` and retry`);
  process.exit(1);
}
