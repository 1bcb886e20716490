import { describe, expect, it } from 'vitest';
import { createRegistry } from '../tool/registry.ts';
import { testDefinition, testOrigin } from '../../test/support/tool.ts';
import { offerRegistry, toolKey, type OfferFacts } from './offer.ts';

const tracker = { ...testOrigin, packageId: 'example.tracker' };
const registry = createRegistry([
  testDefinition('remember'),
  testDefinition('tracker_search', { origin: tracker, needs: ['secret:tracker_api_token'] }),
  testDefinition('workspace_exec', {
    class: 'workspace',
    replay: 'effectful',
    needs: ['workspace'],
  }),
  testDefinition('browser_navigate', { class: 'browser', replay: 'effectful', needs: ['browser'] }),
]);
const facts: OfferFacts = {
  audience: 'direct',
  disabledTools: new Set(),
  secretKinds: new Map(),
  packageAudiences: new Map(),
  backends: { workspace: false, browser: false },
  services: new Set(['mesh.memory.store']),
};

describe('offerRegistry', () => {
  it('offers only what policy allows, with a reason for every tool left out', () => {
    const { registry: offered, withheld } = offerRegistry(registry, facts);
    expect(offered.names()).toEqual(['remember']);
    expect(withheld).toEqual([
      {
        name: 'tracker_search',
        reason: 'needs secret tracker_api_token, not captured for this agent',
      },
      { name: 'workspace_exec', reason: 'needs a workspace backend; none is configured' },
      { name: 'browser_navigate', reason: 'needs a browser backend; none is configured' },
    ]);
    // The executor's lookup is the same reduced registry: what is not offered cannot run.
    expect(offered.get('tracker_search')).toBeUndefined();
  });

  it('offers a secret-needing tool once the agent’s secret of that kind is captured', () => {
    const { registry: offered } = offerRegistry(registry, {
      ...facts,
      secretKinds: new Map([['example.tracker', new Set(['tracker_api_token'])]]),
    });
    expect(offered.names()).toContain('tracker_search');
  });

  it('withholds a tool whose service this runtime does not provide, naming the service', () => {
    const withService = createRegistry([
      testDefinition('recall', { needs: ['service:mesh.memory.store'] }),
      testDefinition('lookup', { needs: ['service:example.index'] }),
    ]);
    const { registry: offered, withheld } = offerRegistry(withService, facts);
    expect(offered.names()).toEqual(['recall']);
    expect(withheld).toEqual([
      { name: 'lookup', reason: 'needs service example.index; this runtime does not provide it' },
    ]);
  });

  it("offers a package's tools only while its install is enabled; one with an on_enable waits for one", () => {
    const keyed = {
      ...facts,
      secretKinds: new Map([['example.tracker', new Set(['tracker_api_token'])]]),
    };
    const waiting = offerRegistry(registry, {
      ...keyed,
      enableRequired: new Set(['example.tracker']),
    });
    expect(waiting.withheld).toContainEqual({
      name: 'tracker_search',
      reason: 'package example.tracker is not enabled for this agent',
    });
    for (const [state, reason] of [
      ['disabling', 'package example.tracker is disabling for this agent'],
      ['error', 'package example.tracker is in error for this agent'],
      ['enabling', 'package example.tracker is enabling for this agent'],
    ] as const) {
      const gated = offerRegistry(registry, {
        ...keyed,
        enableRequired: new Set(['example.tracker']),
        installStates: new Map([['example.tracker', state]]),
      });
      expect(gated.withheld).toContainEqual({ name: 'tracker_search', reason });
    }
    const enabled = offerRegistry(registry, {
      ...keyed,
      enableRequired: new Set(['example.tracker']),
      installStates: new Map([['example.tracker', 'enabled']]),
    });
    expect(enabled.registry.names()).toContain('tracker_search');
    // A package without an on_enable hook is offered until its install says otherwise.
    const optedOut = offerRegistry(registry, {
      ...keyed,
      installStates: new Map([['test.package', 'disabled']]),
    });
    expect(optedOut.withheld).toContainEqual({
      name: 'remember',
      reason: 'package test.package is disabled for this agent',
    });
    expect(optedOut.registry.names()).toContain('tracker_search');
  });

  it('honours per-agent opt-outs and audience limits per package', () => {
    const disabled = offerRegistry(registry, {
      ...facts,
      disabledTools: new Set([toolKey('test.package', 'remember')]),
    });
    expect(disabled.registry.names()).toEqual([]);
    // An opt-out names the package: another package's `remember` is not this one.
    const elsewhere = offerRegistry(registry, {
      ...facts,
      disabledTools: new Set([toolKey('acme.notes', 'remember'), 'remember']),
    });
    expect(elsewhere.registry.names()).toEqual(['remember']);
    expect(disabled.withheld[0]).toEqual({ name: 'remember', reason: 'disabled for this agent' });
    const shared = offerRegistry(registry, {
      ...facts,
      audience: 'shared',
      packageAudiences: new Map([['test.package', ['direct']]]),
    });
    expect(shared.registry.names()).toEqual([]);
    expect(shared.withheld.find((w) => w.name === 'remember')?.reason).toBe(
      'not offered in shared conversations',
    );
  });
});
