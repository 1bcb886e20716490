import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { temporaryDir } from '../../test/support/catalog.ts';
import { readPackageFile } from './disk-files.ts';
import { embeddedFiles, relativePathProblem } from './package-files.ts';

describe('relativePathProblem', () => {
  it.each([['schemas/search.json'], ['search.json'], ['a/b/c/d.json'], ['..hidden.json']])(
    'accepts the plain relative path %j',
    (path) => {
      expect(relativePathProblem(path)).toBeUndefined();
    },
  );

  it.each([
    ['', 'not empty'],
    ['../outside.json', '..'],
    ['schemas/../../outside.json', '..'],
    ['/etc/mesh/params.json', 'absolute'],
    ['C:/schemas/params.json', 'absolute'],
    ['schemas\\params.json', 'separator'],
    ['./params.json', '. segments'],
    ['schemas//params.json', 'empty'],
    ['schemas/params.yaml', '.json'],
    ['schemas/\u0000.json', 'control'],
  ])('refuses %j', (path, reason) => {
    expect(relativePathProblem(path)).toContain(reason);
  });

  it('never accepts a path that could leave the package folder', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('..', '.', '', 'a', 'b.json', '/', '\\', 'C:'), { maxLength: 6 }),
        (parts) => {
          const path = parts.join('/');
          if (relativePathProblem(path) !== undefined) return;
          const segments = path.split('/');
          expect(path.startsWith('/')).toBe(false);
          expect(segments).not.toContain('..');
          expect(segments).not.toContain('');
        },
      ),
    );
  });
});

describe('embeddedFiles', () => {
  it('serves embedded texts and enforces the size cap on them too', () => {
    const files = embeddedFiles({ 'a.json': '{}', 'big.json': 'x'.repeat(20) });
    expect(files.read('a.json', 10)).toEqual({ kind: 'ok', text: '{}' });
    expect(files.read('big.json', 10)).toEqual({ kind: 'too_large', bytes: 20 });
    expect(files.read('missing.json', 10)).toEqual({ kind: 'missing' });
    expect(files.read('toString', 10)).toEqual({ kind: 'missing' });
  });
});

describe('readPackageFile', () => {
  let cleanup: (() => void) | undefined;
  afterEach(() => cleanup?.());

  function packageDir() {
    const { dir, remove } = temporaryDir('files');
    cleanup = remove;
    mkdirSync(join(dir, 'schemas'));
    writeFileSync(join(dir, 'schemas', 'real.json'), '{"type":"object"}');
    writeFileSync(join(dir, 'outside.json'), '{}');
    return dir;
  }

  it('reads a regular file', () => {
    const dir = packageDir();
    expect(readPackageFile(dir, 'schemas/real.json', 100)).toEqual({
      kind: 'ok',
      text: '{"type":"object"}',
    });
  });

  it('refuses a symlinked file, naming the component', () => {
    const dir = packageDir();
    symlinkSync('real.json', join(dir, 'schemas', 'link.json'));
    expect(readPackageFile(dir, 'schemas/link.json', 100)).toEqual({
      kind: 'symlink',
      component: 'schemas/link.json',
    });
  });

  it('refuses a symlinked directory on the way', () => {
    const dir = packageDir();
    symlinkSync('schemas', join(dir, 'alias'));
    expect(readPackageFile(dir, 'alias/real.json', 100)).toEqual({
      kind: 'symlink',
      component: 'alias',
    });
  });

  it('refuses an oversized file before reading it, and a file that is not UTF-8', () => {
    const dir = packageDir();
    writeFileSync(join(dir, 'big.json'), Buffer.alloc(5000, 0x20));
    expect(readPackageFile(dir, 'big.json', 4096)).toEqual({ kind: 'too_large', bytes: 5000 });
    writeFileSync(join(dir, 'latin1.json'), Buffer.from([0x7b, 0xff, 0x7d]));
    expect(readPackageFile(dir, 'latin1.json', 4096)).toEqual({ kind: 'encoding' });
  });

  it('tells a missing file from a directory', () => {
    const dir = packageDir();
    expect(readPackageFile(dir, 'schemas/none.json', 100)).toEqual({ kind: 'missing' });
    expect(readPackageFile(dir, 'schemas/real.json/x.json', 100)).toEqual({ kind: 'missing' });
    expect(readPackageFile(dir, 'schemas', 100)).toEqual({ kind: 'not_a_file' });
  });
});
