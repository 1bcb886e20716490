// Regenerates the README's screenshots (docs/screenshots/): runs the console's browser test, which
// saves the chat, run and usage pages at 1280 px as test-output/screenshots/doc-*.png, and copies
// them into place. Run after a change to those pages: npm run docs:screenshots
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';

execFileSync('npx', ['vitest', 'run', 'test/browser/console.test.ts'], { stdio: 'inherit' });
mkdirSync('docs/screenshots', { recursive: true });
for (const name of ['chat', 'run', 'usage'])
  copyFileSync(`test-output/screenshots/doc-${name}.png`, `docs/screenshots/${name}.png`);
console.log('docs/screenshots/: chat.png, run.png, usage.png');
