/**
 * build:catalog — generates src/generated/catalog.ts from the tools/<name>/ packages (docs/manifest.md).
 *
 *   npm run build:catalog             write the catalog when it changed
 *   npm run build:catalog -- --check  exit 1 naming the stale file instead of writing (CI)
 */
import { fileURLToPath } from 'node:url';
import { buildCatalog } from '../src/manifest/build-catalog.ts';
import { formatDiagnostic, sortDiagnostics } from '../src/manifest/diagnostic.ts';

const OUT = 'src/generated/catalog.ts';

async function main(args: readonly string[]): Promise<number> {
  const unknown = args.filter((a) => a !== '--check');
  if (unknown.length > 0) {
    console.error(
      `build:catalog: unknown argument ${unknown.join(' ')}\nusage: build-catalog [--check]`,
    );
    return 2;
  }
  const check = args.includes('--check');
  const root = fileURLToPath(new URL('..', import.meta.url));
  const outcome = await buildCatalog({
    toolsDir: `${root}tools`,
    outFile: `${root}${OUT}`,
    displayRoot: 'tools',
    displayOut: OUT,
    check,
  });
  switch (outcome.kind) {
    case 'invalid':
      for (const d of sortDiagnostics(outcome.diagnostics)) console.error(formatDiagnostic(d));
      console.error(
        `build:catalog: ${outcome.diagnostics.length} problem(s); ${OUT} was not ${check ? 'checked' : 'written'}`,
      );
      return 1;
    case 'unavailable':
      console.error(
        'build:catalog: the typescript package is required to discover handler exports',
      );
      return 1;
    case 'stale':
      console.error(`${outcome.file} is stale: run npm run build:catalog and commit the result`);
      return 1;
    case 'unchanged':
    case 'written': {
      for (const folder of outcome.skipped)
        console.error(`note: tools/${folder}/ has no manifest.toml; not a package`);
      const verb = outcome.kind === 'written' ? 'wrote' : check ? 'checked' : 'unchanged:';
      console.log(`build:catalog: ${verb} ${outcome.file} (${outcome.packages} package(s))`);
      return 0;
    }
    default: {
      const never: never = outcome;
      throw new Error(`unknown outcome ${JSON.stringify(never)}`);
    }
  }
}

process.exitCode = await main(process.argv.slice(2));
