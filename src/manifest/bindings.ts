import { diagnostic, type Diagnostic } from './diagnostic.ts';
import { HOOK_NAMES, type ToolPackage } from './package-manifest.ts';

/** The names a package's code actually exports, and where they come from. */
export interface BoundNames {
  readonly handlers: ReadonlySet<string>;
  readonly hooks: ReadonlySet<string>;
  /** How `handlers.ts` and `hooks.ts` are named in diagnostics. */
  readonly handlersFile: string;
  readonly hooksFile: string;
}

/**
 * The 1:1 match between a manifest and its bound code. A `[[tools]]` handler with no binding is
 * missing; an export no tool names is extra; likewise for `[hooks]` and `hooks.ts`. Every
 * diagnostic names the package, and the tool and handler where there is one.
 */
export function matchBindings(pkg: ToolPackage, bound: BoundNames): Diagnostic[] {
  const out: Diagnostic[] = [];
  const id = pkg.manifest.package.id;
  const referenced = new Set<string>();
  pkg.manifest.tools.forEach((tool, i) => {
    referenced.add(tool.handler);
    if (!bound.handlers.has(tool.handler)) {
      out.push(
        diagnostic(
          'binding_missing',
          pkg.manifestFile,
          `tools[${i}].handler`,
          `tool ${tool.name} names handler ${tool.handler}, which ${bound.handlersFile} does not export`,
          { package: id, tool: tool.name, handler: tool.handler },
        ),
      );
    }
  });
  for (const name of [...bound.handlers].sort()) {
    if (referenced.has(name)) continue;
    out.push(
      diagnostic(
        'binding_extra',
        bound.handlersFile,
        name,
        `is exported as a handler but no [[tools]] entry of ${id} names it (handlers.ts exports handlers only)`,
        { package: id, handler: name },
      ),
    );
  }
  const declared = new Set<string>();
  for (const hook of HOOK_NAMES) {
    const name = pkg.manifest.hooks[hook];
    if (name === undefined) continue;
    declared.add(name);
    if (!bound.hooks.has(name)) {
      out.push(
        diagnostic(
          'hook_binding_missing',
          pkg.manifestFile,
          `hooks.${hook}`,
          `names hook function ${name}, which ${bound.hooksFile} does not export`,
          { package: id, handler: name },
        ),
      );
    }
  }
  for (const name of [...bound.hooks].sort()) {
    if (declared.has(name)) continue;
    out.push(
      diagnostic(
        'hook_binding_extra',
        bound.hooksFile,
        name,
        `is exported as a hook but [hooks] of ${id} does not declare it`,
        { package: id, handler: name },
      ),
    );
  }
  return out;
}
