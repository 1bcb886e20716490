import type { Definition } from '../../src/tool/definition.ts';
import { createRegistry, type Registry } from '../../src/tool/registry.ts';

const origin = {
  source: 'first_party',
  packageId: 'crash.test',
  version: '1.0.0',
  digest: '0'.repeat(64),
} as const;
const parameters = { type: 'object', properties: {} } as const;

/** The crash test's tools: an effect and a replayable read, both hitting the counting server. */
export function crashRegistry(counterUrl: string): Registry {
  const definitions: Definition[] = [
    {
      tool: { name: 'post_effect', description: 'Acts on the outside world once.', parameters },
      class: 'effect',
      replay: 'effectful',
      needs: [],
      origin,
      async execute(ctx) {
        const response = await fetch(`${counterUrl}/effect`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key: `${ctx.runId}/${ctx.callId}` }),
          signal: ctx.signal,
        });
        if (!response.ok) throw new Error(`counter answered ${response.status}`);
        return { text: 'effect delivered' };
      },
    },
    {
      tool: { name: 'read_effect', description: 'Reads; safe to repeat.', parameters },
      class: 'query',
      replay: 'replayable',
      needs: [],
      origin,
      async execute(ctx) {
        const response = await fetch(
          `${counterUrl}/read?key=${encodeURIComponent(`${ctx.runId}/${ctx.callId}`)}`,
          {
            signal: ctx.signal,
          },
        );
        if (!response.ok) throw new Error(`counter answered ${response.status}`);
        return { text: 'read ok' };
      },
    },
  ];
  return createRegistry(definitions);
}

/** Each crash-test run's script: reads and effects interleaved. */
export function crashScript(runIndex: number): { id: string; name: string; arguments: string }[] {
  return ['read_effect', 'post_effect', 'read_effect', 'post_effect'].map((name, k) => ({
    id: `r${runIndex}c${k}`,
    name,
    arguments: '{}',
  }));
}
