import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * The house, kept readable: no source file grows past what one reading takes in, and no module
 * of src/ is part of an import cycle (a cycle makes load order matter and hides a missing seam).
 * The cycle check is madge's `--circular`, written over the TypeScript parser, and counts every
 * edge: value and type-only imports, re-exports, `import()` and `import('…')` types. A type-only
 * or deferred edge still ties the two modules' meaning together, so it may not close a cycle.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MAX_LINES = 400;

function filesUnder(folder: string, keep: (name: string) => boolean): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && keep(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** Every module `file` names: value, type-only and dynamic imports, re-exports and `import('…')` types. */
function imports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found: string[] = [];
  const add = (specifier: ts.Node | undefined): void => {
    if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.'))
      found.push(resolve(dirname(file), specifier.text));
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      add(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
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

  it('has no import cycle in src/ or tools/', () => {
    const source = (n: string) => n.endsWith('.ts') && !n.endsWith('.test.ts');
    const modules = [...filesUnder('src', source), ...filesUnder('tools', source)];
    expect(modules.length).toBeGreaterThan(100);
    const graph = new Map(modules.map((m) => [m, imports(m)]));
    // The check must see edges: a parser that found none would pass vacuously.
    expect([...graph.values()].flat().length).toBeGreaterThan(500);
    const found = cycles(graph).map((c) => c.map((f) => relative(root, f)).join(' -> '));
    expect(found).toEqual([]);
  });

  it('keeps the Mesh interface at the bottom of app/: it imports types only', () => {
    const file = join(root, 'src/app/mesh.ts');
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    const imports = source.statements.filter(ts.isImportDeclaration);
    expect(imports.length).toBeGreaterThan(0);
    const values = imports.filter((i) => i.importClause?.isTypeOnly !== true);
    expect(values.map((i) => i.moduleSpecifier.getText(source))).toEqual([]);
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
