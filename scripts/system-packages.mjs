#!/usr/bin/env node
/*
 * `npm test`'s first step: the Debian packages the suite runs for real — bubblewrap (the local
 * workspace sandbox), chromium (the browser tests), git (the GitHub flow) and the pinned gh. Present: nothing is
 * printed. Missing and run by root with apt-get: they are installed. Otherwise the run stops here
 * with one line naming the command, instead of failing dozens of tests with `spawn bwrap ENOENT`.
 */
import { spawnSync } from 'node:child_process';

/*
 * gh is the GitHub CLI build the checkout pins by checksum (tools/github/gh-pin.ts, decision
 * 0052): Debian's package at exactly that version, which the local workspace sandbox sees in the
 * host's /usr. Keep the version here equal to GH_PIN.debian.
 */
const GH_DEBIAN = '2.23.0+dfsg1-1';

const NEEDED = [
  ['bwrap', 'bubblewrap'],
  ['chromium', 'chromium'],
  ['git', 'git'],
  ['gh', `gh=${GH_DEBIAN}`, () => debianVersion('gh') === GH_DEBIAN],
];

const has = (command) =>
  spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

function debianVersion(pkg) {
  const out = spawnSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() : undefined;
}

const ready = ([command, , exact]) => has(command) && (exact === undefined || exact());
const missing = NEEDED.filter((need) => !ready(need)).map(([, pkg]) => pkg);
if (missing.length === 0) process.exit(0);

const install = `apt-get install -y --allow-downgrades ${missing.join(' ')}`;
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
  run(['install', '-y', '--allow-downgrades', ...missing]) ||
  (run(['update']) && run(['install', '-y', '--allow-downgrades', ...missing]));
if (!installed || NEEDED.some((need) => !ready(need))) {
  console.error(`npm test: could not install ${missing.join(', ')}; run \`${install}\` and retry`);
  process.exit(1);
}
