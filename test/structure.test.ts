import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * The house, kept readable: no source file grows past what one reading takes in, and no module
 * of src/ is part of an import cycle (a cycle makes load order matter and hides a missing seam).
 * The cycle check is madge's `--circular`, written over the TypeScript parser: static value
 * imports and re-exports count; `import type` (erased) and `import()` (loaded when run) do not.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MAX_LINES = 400;

function filesUnder(folder: string, keep: (name: string) => boolean): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && keep(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** The modules `file` imports for their values, resolved to paths. */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found: string[] = [];
  for (const statement of source.statements) {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (clause?.isTypeOnly) continue;
      const bindings = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        clause.name === undefined &&
        bindings !== undefined &&
        ts.isNamedImports(bindings) &&
        bindings.elements.length > 0 &&
        bindings.elements.every((e) => e.isTypeOnly);
      if (onlyTypes) continue;
      specifier = statement.moduleSpecifier;
    } else if (ts.isExportDeclaration(statement) && !statement.isTypeOnly) {
      specifier = statement.moduleSpecifier;
    }
    if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.'))
      found.push(resolve(dirname(file), specifier.text));
  }
  return found;
}

/** The strongly connected components of more than one module (Tarjan's algorithm). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop();
      if (w === undefined) break;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the shape of the source tree', () => {
  it(`has no file in src/ or tools/ over ${MAX_LINES} lines`, () => {
    const text = (name: string) => /\.(ts|js|toml|md|json)$/.test(name);
    const long = [...filesUnder('src', text), ...filesUnder('tools', text)]
      .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${relative(root, f.file)}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });

  it('has no import cycle in src/', () => {
    const modules = filesUnder('src', (n) => n.endsWith('.ts') && !n.endsWith('.test.ts'));
    expect(modules.length).toBeGreaterThan(100);
    const graph = new Map(modules.map((m) => [m, valueImports(m)]));
    // The check must see edges: a parser that found none would pass vacuously.
    expect([...graph.values()].flat().length).toBeGreaterThan(500);
    const found = cycles(graph).map((c) => c.map((f) => relative(root, f)).join(' -> '));
    expect(found).toEqual([]);
  });

  it('finds a cycle when there is one (the check is not vacuous)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c']]);
  });
});
