/*
 * One racer of test/store/home-lock.test.ts, for as many rounds as it is sent: prints READY, then
 * for each line `{"home": H, "at": T}` on stdin spins to the instant T, tries to take the home
 * lock of H and prints WON or LOST <code>. A winner holds the lock until the line `release` (then
 * prints RELEASED) or until stdin closes.
 */
import { createInterface } from 'node:readline';
import { acquireHomeLock } from '../../src/store/home-lock.ts';

let held: { release(): void } | undefined;

process.stdout.write('READY\n');
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line === 'release') {
    held?.release();
    held = undefined;
    process.stdout.write('RELEASED\n');
    return;
  }
  const { home, at } = JSON.parse(line) as { home: string; at: number };
  // Every racer spins to the same instant, so the takeovers overlap as closely as they can.
  while (Date.now() < at);
  try {
    held = acquireHomeLock(home);
    process.stdout.write('WON\n');
  } catch (error) {
    process.stdout.write(`LOST ${(error as { code?: string }).code ?? 'unknown'}\n`);
  }
});
lines.on('close', () => held?.release());
