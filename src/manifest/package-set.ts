import { diagnostic, type Diagnostic } from './diagnostic.ts';
import type { ToolPackage } from './package-manifest.ts';

/**
 * Checks what no single manifest can: package ids are unique across the set, and tool names are
 * unique across packages (the registry holds callables, not packages, so two packages cannot both
 * offer `search`). The later package in the given order is the one refused, naming the first.
 */
export function checkPackageSet(packages: readonly ToolPackage[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const ids = new Map<string, ToolPackage>();
  const tools = new Map<string, ToolPackage>();
  for (const pkg of packages) {
    const id = pkg.manifest.package.id;
    const first = ids.get(id);
    if (first) {
      out.push(
        diagnostic(
          'package_id_duplicate',
          pkg.manifestFile,
          'package.id',
          `package id ${id} is also declared by ${first.manifestFile}; ids are globally unique`,
          { package: id },
        ),
      );
      continue;
    }
    ids.set(id, pkg);
    pkg.manifest.tools.forEach((tool, i) => {
      const owner = tools.get(tool.name);
      if (owner) {
        out.push(
          diagnostic(
            'tool_name_duplicate',
            pkg.manifestFile,
            `tools[${i}].name`,
            `tool ${tool.name} is also declared by ${owner.manifest.package.id} (${owner.manifestFile})`,
            { package: id, tool: tool.name, handler: tool.handler },
          ),
        );
      } else {
        tools.set(tool.name, pkg);
      }
    });
  }
  return out;
}
