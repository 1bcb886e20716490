import type TypeScriptApi from 'typescript';
import type * as TypeScript from 'typescript';

/** The TypeScript compiler API as a value (loaded lazily, see {@link loadExportDiscovery}). */
type Ts = typeof TypeScriptApi;

/** The value exports of one module, and the constructs that make them undecidable statically. */
export interface ModuleExports {
  /** Named value exports, sorted, without duplicates. Type-only exports are left out. */
  readonly names: readonly string[];
  /** Why some exports cannot be bound (export *, default exports, mutable bindings). */
  readonly problems: readonly string[];
}

/** Reads a module's exports from its source text. */
export type ExportDiscovery = (sourceText: string, fileName: string) => ModuleExports;

function hasModifier(ts: Ts, node: TypeScript.Node, kind: TypeScript.SyntaxKind): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);
}

function bindingNames(ts: Ts, name: TypeScript.BindingName, out: string[]): void {
  if (ts.isIdentifier(name)) {
    out.push(name.text);
    return;
  }
  for (const element of name.elements) {
    if (!ts.isOmittedExpression(element)) bindingNames(ts, element.name, out);
  }
}

/** Names declared at the top level only as types (interface, type alias), never as values. */
function typeOnlyNames(ts: Ts, file: TypeScript.SourceFile): Set<string> {
  const types = new Set<string>();
  const values = new Set<string>();
  for (const s of file.statements) {
    if (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) types.add(s.name.text);
    else if (
      (ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s) || ts.isEnumDeclaration(s)) &&
      s.name
    )
      values.add(s.name.text);
    else if (ts.isVariableStatement(s)) {
      const names: string[] = [];
      for (const d of s.declarationList.declarations) bindingNames(ts, d.name, names);
      names.forEach((n) => values.add(n));
    } else if (ts.isImportDeclaration(s) && s.importClause && !s.importClause.isTypeOnly) {
      const clause = s.importClause;
      if (clause.name) values.add(clause.name.text);
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) values.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings)) {
        for (const e of bindings.elements) (e.isTypeOnly ? types : values).add(e.name.text);
      }
    } else if (ts.isImportDeclaration(s) && s.importClause?.isTypeOnly) {
      const bindings = s.importClause.namedBindings;
      if (bindings && ts.isNamedImports(bindings))
        bindings.elements.forEach((e) => types.add(e.name.text));
    }
  }
  return new Set([...types].filter((t) => !values.has(t)));
}

/**
 * Discovers a module's named value exports with the TypeScript parser (syntax only: no program,
 * no type checking, no execution). The generator binds exactly these names, so handler lists
 * come from the code, never from the manifest that start-up verification compares them with.
 * `export *` and default exports cannot be bound by name and are reported; so is `export let`,
 * whose binding could be reassigned after verification.
 */
export function exportsOf(ts: Ts, sourceText: string, fileName: string): ModuleExports {
  const file = ts.createSourceFile(
    fileName,
    sourceText,
    ts.ScriptTarget.Latest,
    false,
    ts.ScriptKind.TS,
  );
  const names = new Set<string>();
  const problems: string[] = [];
  const typeOnly = typeOnlyNames(ts, file);
  for (const s of file.statements) {
    if (ts.isExportDeclaration(s)) {
      if (s.isTypeOnly) continue;
      if (!s.exportClause) {
        problems.push('export * cannot be bound by name; export each handler explicitly');
      } else if (ts.isNamespaceExport(s.exportClause)) {
        problems.push(`export * as ${s.exportClause.name.text} cannot be bound by name`);
      } else {
        for (const e of s.exportClause.elements) {
          if (e.isTypeOnly) continue;
          const local = (e.propertyName ?? e.name).text;
          if (!s.moduleSpecifier && typeOnly.has(local)) continue;
          const exported = e.name.text;
          if (exported === 'default')
            problems.push('a default export cannot be bound; use named exports');
          else names.add(exported);
        }
      }
      continue;
    }
    if (ts.isExportAssignment(s)) {
      problems.push('a default export cannot be bound; use named exports');
      continue;
    }
    if (!hasModifier(ts, s, ts.SyntaxKind.ExportKeyword)) continue;
    if (hasModifier(ts, s, ts.SyntaxKind.DefaultKeyword)) {
      problems.push('a default export cannot be bound; use named exports');
      continue;
    }
    if (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) continue;
    if (ts.isVariableStatement(s)) {
      const isConst = (s.declarationList.flags & ts.NodeFlags.Const) !== 0;
      const declared: string[] = [];
      for (const d of s.declarationList.declarations) bindingNames(ts, d.name, declared);
      if (!isConst) {
        problems.push(
          `export let/var ${declared.join(', ')} could be reassigned after verification; use const`,
        );
        continue;
      }
      declared.forEach((n) => names.add(n));
    } else if (
      (ts.isFunctionDeclaration(s) ||
        ts.isClassDeclaration(s) ||
        ts.isEnumDeclaration(s) ||
        ts.isModuleDeclaration(s)) &&
      s.name &&
      ts.isIdentifier(s.name)
    ) {
      names.add(s.name.text);
    } else if (ts.isImportEqualsDeclaration(s)) {
      names.add(s.name.text);
    }
  }
  return { names: [...names].sort(), problems };
}

/**
 * Loads the TypeScript parser lazily (it is a development dependency and heavy), or returns
 * undefined when it is not installed, so commands that do not crawl never pay for it.
 */
export async function loadExportDiscovery(): Promise<ExportDiscovery | undefined> {
  let ts: Ts;
  try {
    ts = (await import('typescript')).default;
  } catch {
    return undefined;
  }
  return (sourceText, fileName) => exportsOf(ts, sourceText, fileName);
}
