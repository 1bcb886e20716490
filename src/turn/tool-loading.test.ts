import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../model/json.ts';
import { catalogDefinitions } from '../../test/support/remote-catalog.ts';
import { declaredVerb } from '../../test/support/catalog.ts';
import { testDefinition, testRuntime } from '../../test/support/tool.ts';
import { execute } from '../tool/executor.ts';
import { createRegistry } from '../tool/registry.ts';
import { definitionFingerprint } from './activations.ts';
import { planToolLoading, type LoadingInput } from './tool-loading.ts';
import { TOOL_SEARCH } from './tool-search.ts';

const memory = ['remember', 'recall'].map((name) =>
  testDefinition(name, { origin: { ...testDefinition(name).origin, packageId: 'mesh.memory' } }),
);
// The agent's own verbs as the turn gets them from policy: tool_search comes declared.
const own = [...memory, declaredVerb(TOOL_SEARCH)];
const catalog = catalogDefinitions();
const BUDGET = { contextTokens: 32000, reservedOutputTokens: 2000 };

function planned(
  registry = createRegistry([...own, ...catalog]),
  more: Partial<LoadingInput> = {},
) {
  const saved: JsonObject[] = [];
  const plan = planToolLoading({
    registry,
    budget: BUDGET,
    checkpoint: { kind: 'turn' },
    save: async (c) => void saved.push(c),
    ...more,
  });
  return { plan, saved };
}

async function search(
  registry: Awaited<ReturnType<typeof planToolLoading>>['registry'],
  query: string,
) {
  const result = await execute(
    registry,
    { id: `c-${query.length}`, name: TOOL_SEARCH, arguments: JSON.stringify({ query }) },
    testRuntime(),
  );
  if (result.kind !== 'observation') throw new Error(`tool_search answered ${result.kind}`);
  return result.observation;
}

describe('progressive tool loading', () => {
  it('carries three small tools as they are: both figures recorded, nothing stored', async () => {
    const registry = createRegistry([...own, testDefinition('lookup')]);
    const { plan, saved } = planned(registry);
    const loading = await plan;
    console.log('3 small tools:', JSON.stringify(loading.decision));
    expect(loading.decision.index).toBe(false);
    expect(loading.decision.indexTokens).toBeGreaterThan(loading.decision.allTokens);
    // Carrying everything, there is nothing to search: tool_search is not offered.
    expect(loading.offered().map((t) => t.name)).toEqual(['remember', 'recall', 'lookup']);
    expect(loading.registry.names()).toEqual(['remember', 'recall', 'lookup']);
    expect(loading.requestData()).toEqual({ ...loading.decision });
    await loading.used([{ id: '1', name: 'lookup', arguments: '{}' }]);
    expect(saved).toEqual([]);
  });

  it('weighs tokens, not tools: six very large schemas go on the index, six small ones do not', async () => {
    const schema = (words: number) => ({
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: words }, (_, i) => [
          `field_${i}`,
          { type: 'string', description: `the value number ${i} of the record` },
        ]),
      ),
    });
    const six = (words: number) =>
      createRegistry([
        ...own,
        ...Array.from({ length: 6 }, (_, i) =>
          testDefinition(`op_${i}`, {
            parameters: schema(words),
            origin: { ...memory[0]!.origin, packageId: 'test.big' },
          }),
        ),
      ]);
    const large = await planned(six(120)).plan;
    const small = await planned(six(1)).plan;
    console.log(
      'six large:',
      JSON.stringify(large.decision),
      'six small:',
      JSON.stringify(small.decision),
    );
    expect(large.decision.index).toBe(true);
    expect(small.decision.index).toBe(false);
  });

  it('carries a lone searchable tool, however large: a search would load it whole anyway', async () => {
    const huge = testDefinition('lookup', {
      description: 'a very long description. '.repeat(2000),
      origin: { ...memory[0]!.origin, packageId: 'test.big' },
    });
    const loading = await planned(createRegistry([...own, huge])).plan;
    expect(loading.decision.index).toBe(false);
    expect(loading.offered().map((t) => t.name)).toContain('lookup');
  });

  it('carries everything when policy withheld tool_search (an opt-out): there is no index without it', async () => {
    const loading = await planned(createRegistry([...memory, ...catalog])).plan;
    expect(loading.decision.index).toBe(false);
    expect(loading.offered()).toHaveLength(memory.length + catalog.length);
  });

  it('carries the index for 40 remote tools, and for 96', async () => {
    const forty = await planned(createRegistry([...own, ...catalog.slice(0, 40)])).plan;
    console.log('40 remote tools:', JSON.stringify(forty.decision));
    expect(forty.decision.index).toBe(true);
    expect(forty.decision.indexTokens).toBeLessThan(forty.decision.allTokens);
  });

  it('offers own verbs and tool_search first, then what a search loads', async () => {
    const { plan, saved } = planned();
    const loading = await plan;
    console.log('96 remote tools:', JSON.stringify(loading.decision));
    expect(loading.decision.index).toBe(true);
    expect(loading.decision.indexTokens).toBeLessThan(loading.decision.allTokens);
    expect(loading.offered().map((t) => t.name)).toEqual(['remember', 'recall', TOOL_SEARCH]);
    const description = loading.offered()[2]?.description ?? '';
    expect(description).toContain('github: pull request');

    const found = await search(loading.registry, 'open a PR');
    expect(found.text).toContain('github__create_pull_request');
    expect(loading.offered().map((t) => t.name)).toContain('github__create_pull_request');
    const data = loading.requestData();
    expect(data['loaded']).toContainEqual({
      name: 'github__create_pull_request',
      query: 'open a PR',
    });
    expect(saved.at(-1)?.['activations']).toContainEqual({
      name: 'github__create_pull_request',
      fingerprint: definitionFingerprint(
        catalog.find((d) => d.tool.name === 'github__create_pull_request')!,
      ),
    });
    expect(loading.requestData()['loaded']).toEqual([]);
  });

  it('unloads the least recently used when a search passes the share, and tells the model which', async () => {
    // An 8,000-token input budget leaves the loaded tools 1,000 tokens: about one search's worth.
    const { plan } = planned(undefined, {
      budget: { contextTokens: 10000, reservedOutputTokens: 2000 },
    });
    const loading = await plan;
    await search(loading.registry, 'open a PR');
    const first = loading
      .offered()
      .slice(3)
      .map((t) => t.name);
    await loading.used([{ id: 'x', name: 'github__create_pull_request', arguments: '{}' }]);
    const second = await search(loading.registry, 'take a screenshot of the page');
    const unloaded = (second.data as { unloaded: string[] }).unloaded;
    expect(unloaded.length).toBeGreaterThan(0);
    // Least recently used first: the PR tool was used after its search, so it goes last.
    expect(unloaded).not.toContain('github__create_pull_request');
    expect(first).toEqual(expect.arrayContaining(unloaded));
    expect(second.text).toContain(
      `Unloaded to make room, no longer offered (search again to use them): ${unloaded.join(', ')}.`,
    );
    const data = loading.requestData();
    expect(data['unloaded']).toContainEqual({
      name: unloaded[0],
      reason:
        "least recently used, to stay within the loaded tools' 1000-token share of the input budget",
    });
  });

  it('runs a call to a granted tool that was never loaded: the executor resolves against everything', async () => {
    const loading = await planned().plan;
    expect(loading.offered().map((t) => t.name)).not.toContain('slack__slack_post_message');
    const result = await execute(
      loading.registry,
      { id: 'c1', name: 'slack__slack_post_message', arguments: '{"channel_id":"C1","text":"hi"}' },
      testRuntime(),
    );
    expect(result.kind).toBe('observation');
    expect(result.observation.text).toBe(
      'slack__slack_post_message ran with {"channel_id":"C1","text":"hi"}',
    );
  });

  it('loads a resumed run’s activations again only where the authority it has now allows, naming the rest', async () => {
    const byName = (n: string) => catalog.find((d) => d.tool.name === n)!;
    const kept = byName('github__create_issue');
    const revoked = byName('slack__slack_post_message');
    const redefined = byName('github__merge_pull_request');
    const checkpoint = {
      kind: 'turn',
      activations: [kept, revoked, redefined].map((d) => ({
        name: d.tool.name,
        fingerprint: definitionFingerprint(d),
      })),
    };
    // While the run waited: the Slack tool was revoked, the merge tool's definition changed.
    const now = createRegistry([
      ...own,
      ...catalog
        .filter((d) => d !== revoked)
        .map((d) =>
          d === redefined
            ? { ...d, tool: { ...d.tool, description: 'Merge, now differently' } }
            : d,
        ),
    ]);
    const { plan, saved } = planned(now, { checkpoint });
    const loading = await plan;
    expect(loading.offered().map((t) => t.name)).toEqual([
      'remember',
      'recall',
      TOOL_SEARCH,
      'github__create_issue',
    ]);
    expect(loading.notice).toBe(
      'Tools you had loaded earlier in this task are no longer available and are not offered: ' +
        'slack__slack_post_message (it is no longer granted to you); ' +
        'github__merge_pull_request (its definition changed since you loaded it). ' +
        'Do not call them; search again for what you need.',
    );
    expect(loading.requestData()['refused']).toEqual([
      { name: 'slack__slack_post_message', reason: 'it is no longer granted to you' },
      { name: 'github__merge_pull_request', reason: 'its definition changed since you loaded it' },
    ]);
    expect(saved.at(-1)).toEqual({
      kind: 'turn',
      activations: [{ name: 'github__create_issue', fingerprint: definitionFingerprint(kept) }],
    });
  });
});
