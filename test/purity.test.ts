import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Packages the pure core may import: schema validation only. */
const ALLOWED_PACKAGES = new Set(['ajv', 'ajv-formats']);
/** Node built-ins that do no I/O. */
const ALLOWED_BUILTINS = new Set(['node:crypto']);
/** Which other src/ folders each pure folder may import. */
const ALLOWED_FOLDERS: Record<string, readonly string[]> = {
  model: ['model'],
  tool: ['tool', 'model'],
};

function sources(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name));
}

function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName);
}

function violation(file: string, specifier: string, folder: string): string | undefined {
  if (specifier.startsWith('.')) {
    const target = relative(join(root, 'src'), resolve(dirname(file), specifier));
    const top = target.split('/')[0] ?? '';
    if (target.startsWith('..')) return `${specifier} leaves src/`;
    return ALLOWED_FOLDERS[folder]?.includes(top)
      ? undefined
      : `${specifier} reaches into src/${top}`;
  }
  const bare = specifier.replace(/^node:/, '');
  if (builtinModules.includes(bare) || builtinModules.includes(bare.split('/')[0] ?? '')) {
    return ALLOWED_BUILTINS.has(`node:${bare}`)
      ? undefined
      : `${specifier} is an I/O-capable built-in`;
  }
  const pkg = specifier.startsWith('@')
    ? specifier.split('/').slice(0, 2).join('/')
    : (specifier.split('/')[0] ?? '');
  if (folder === 'model') return `${specifier}: src/model takes no runtime dependency`;
  return ALLOWED_PACKAGES.has(pkg)
    ? undefined
    : `${specifier} is not an allowed dependency of the pure core`;
}

describe('the pure core', () => {
  for (const folder of ['model', 'tool']) {
    it(`src/${folder} imports no I/O, no database driver and nothing from other layers`, () => {
      const files = sources(join(root, 'src', folder));
      expect(files.length).toBeGreaterThan(0);
      const problems = files.flatMap((file) =>
        importsOf(file)
          .map((s) => violation(file, s, folder))
          .filter((v): v is string => v !== undefined)
          .map((v) => `${relative(root, file)}: ${v}`),
      );
      expect(problems).toEqual([]);
    });
  }

  it('the checker catches what it is meant to catch', () => {
    const file = join(root, 'src/tool/x.ts');
    expect(violation(file, 'node:fs', 'tool')).toBeDefined();
    expect(violation(file, 'fs/promises', 'tool')).toBeDefined();
    expect(violation(file, 'node:child_process', 'tool')).toBeDefined();
    expect(violation(file, 'pg', 'tool')).toBeDefined();
    expect(violation(file, '@electric-sql/pglite', 'tool')).toBeDefined();
    expect(violation(file, '../store/db.ts', 'tool')).toBeDefined();
    expect(violation(file, '../model/wire.ts', 'tool')).toBeUndefined();
    expect(violation(join(root, 'src/model/x.ts'), '../tool/registry.ts', 'model')).toBeDefined();
    expect(violation(join(root, 'src/model/x.ts'), 'ajv', 'model')).toBeDefined();
  });
});
