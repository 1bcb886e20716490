/** The CLI run from its TypeScript sources (under tsx), as bench:cli's comparison path runs it. */
import { main } from './main.ts';

process.exitCode = await main(process.argv.slice(2));
