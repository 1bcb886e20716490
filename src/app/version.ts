import { readFileSync } from 'node:fs';

/** Mesh's version, as package.json gives it. */
export function meshVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}
