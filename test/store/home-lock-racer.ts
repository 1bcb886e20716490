/*
 * One racer of test/store/home-lock.test.ts: prints READY, waits for a line on stdin naming the instant to start, tries to
 * take the home lock, prints WON or LOST <code>, and (a winner) holds the lock until stdin closes.
 */
import { acquireHomeLock } from '../../src/store/home-lock.ts';

const home = process.argv[2];
if (!home) throw new Error('usage: home-lock-racer HOME');

process.stdout.write('READY\n');
process.stdin.once('data', (line: Buffer) => {
  // Every racer spins to the same instant, so the takeovers overlap as closely as they can.
  const at = Number(line.toString().trim());
  while (Date.now() < at);
  try {
    const lock = acquireHomeLock(home);
    process.stdout.write('WON\n');
    process.stdin.once('end', () => lock.release());
    process.stdin.resume();
  } catch (error) {
    process.stdout.write(`LOST ${(error as { code?: string }).code ?? 'unknown'}\n`);
    process.exit(0);
  }
});
