import type { JsonObject, JsonSchema } from '../../src/model/json.ts';
import { services, type ToolRuntime } from '../../src/tool/context.ts';
import type { Definition, Origin, ToolHandler } from '../../src/tool/definition.ts';

/** A first-party origin for definitions built in tests. */
export const testOrigin: Origin = Object.freeze({
  source: 'first_party',
  packageId: 'test.package',
  version: '1.0.0',
  digest: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
});

/** Builds a definition with sensible defaults for tests. */
export function testDefinition(
  name: string,
  overrides: Partial<Omit<Definition, 'tool'>> & {
    parameters?: JsonSchema;
    description?: string;
  } = {},
): Definition {
  const { parameters, description, ...rest } = overrides;
  const execute: ToolHandler = async () => ({ text: 'ok' });
  return {
    tool: {
      name,
      description: description ?? `the ${name} tool`,
      parameters: parameters ?? { type: 'object', properties: { q: { type: 'string' } } },
    },
    class: 'query',
    replay: 'replayable',
    needs: [],
    origin: testOrigin,
    execute,
    ...rest,
  };
}

/** A runtime with no services and the given per-package config. */
export function testRuntime(config: Record<string, JsonObject> = {}): ToolRuntime {
  return {
    agentId: 'agent-1',
    runId: 'run-1',
    provenance: { kind: 'operator', operator: 'test' },
    signal: new AbortController().signal,
    services: services([]),
    configFor: (packageId) => config[packageId] ?? {},
  };
}
