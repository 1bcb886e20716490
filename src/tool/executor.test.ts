import { describe, expect, it } from 'vitest';
import { testDefinition, testRuntime } from '../../test/support/tool.ts';
import type { ToolContext } from './context.ts';
import type { ToolClass } from './definition.ts';
import { hasCode, InvalidToolInputError, ToolUnavailableError } from './errors.ts';
import { execute, FatalToolError } from './executor.ts';
import { createRegistry } from './registry.ts';

const call = (name: string, args: string, id = 'call-1') => ({ id, name, arguments: args });

async function fatal(promise: Promise<unknown>): Promise<FatalToolError> {
  try {
    await promise;
  } catch (error) {
    expect(hasCode(error, FatalToolError.code)).toBe(true);
    return error as FatalToolError;
  }
  throw new Error('expected a fatal error');
}

describe('execute', () => {
  it('links the bytes a handler returns as artifacts and hands the bytes on, sized', async () => {
    const id = '6f1d0c6e-94a4-4f51-a1c7-2d2f0c3c1b7a';
    const content = new Uint8Array([1, 2, 3]);
    const registry = createRegistry([
      testDefinition('snap', {
        execute: async () => ({
          text: `[image image/png, 3 bytes, artifact ${id}]`,
          attachments: [{ id, kind: 'image', mediaType: 'image/png', content }],
        }),
      }),
    ]);
    const result = await execute(registry, call('snap', '{}'), testRuntime());
    expect(result.kind).toBe('observation');
    expect(result.observation.artifacts).toEqual([
      { artifactId: id, kind: 'image', mediaType: 'image/png', sizeBytes: 3 },
    ]);
    expect(result.kind === 'observation' && result.attachments?.[0]?.content).toBe(content);
  });

  it('fails the call when a handler returns attachments it cannot store', async () => {
    const registry = createRegistry([
      testDefinition('snap', {
        execute: async () => ({
          text: 'x',
          attachments: [
            { id: 'not-a-uuid', kind: 'image', mediaType: 'image/png', content: new Uint8Array() },
          ],
        }),
      }),
    ]);
    const error = await fatal(execute(registry, call('snap', '{}'), testRuntime()));
    expect(error.failure.message).toMatch(/attachments\[0\]\.id/);
  });

  it('decodes, invokes the handler with its context and returns a typed observation', async () => {
    let seen: ToolContext | undefined;
    const registry = createRegistry([
      testDefinition('lookup', {
        execute: async (ctx, args) => {
          seen = ctx;
          return { text: `found ${JSON.stringify(args['q'])}`, data: { hits: 1 } };
        },
      }),
    ]);
    const result = await execute(
      registry,
      call('lookup', '{"q":"x"}'),
      testRuntime({ 'test.package': { region: 'eu' } }),
    );
    expect(result.kind).toBe('observation');
    expect(result.observation).toEqual({ kind: 'result', text: 'found "x"', data: { hits: 1 } });
    expect(seen?.callId).toBe('call-1');
    expect(seen?.toolName).toBe('lookup');
    expect(seen?.config).toEqual({ region: 'eu' });
    expect(Object.isFrozen(result.observation)).toBe(true);
  });

  it('turns a hallucinated tool name into an observation naming the offered tools', async () => {
    const registry = createRegistry([testDefinition('remember'), testDefinition('recall')]);
    const result = await execute(registry, call('delete_everything', '{}'), testRuntime());
    expect(result.kind).toBe('unknown_tool');
    expect(result.observation.kind).toBe('unknown_tool');
    expect(result.observation.text).toContain('"delete_everything"');
    expect(result.observation.text).toContain('remember, recall');
  });

  it('does not run the handler when the arguments are refused', async () => {
    let ran = false;
    const registry = createRegistry([
      testDefinition('lookup', {
        execute: async () => {
          ran = true;
          return { text: '' };
        },
      }),
    ]);
    const result = await execute(
      registry,
      call('lookup', '{"q":"x","source":"y-value"}'),
      testRuntime(),
    );
    expect(ran).toBe(false);
    expect(result.kind).toBe('invalid_input');
    expect(result.observation.text).toContain('unknown field `source`; the accepted fields are: q');
    expect(result.observation.text).not.toContain('y-value');
  });

  it('makes a handler’s invalid-input error an observation for every class', async () => {
    for (const cls of ['query', 'workspace', 'browser', 'effect'] as ToolClass[]) {
      const registry = createRegistry([
        testDefinition('t', {
          class: cls,
          replay: cls === 'query' ? 'replayable' : 'effectful',
          execute: async () => {
            throw new InvalidToolInputError('team must be one of the agent’s teams');
          },
        }),
      ]);
      const result = await execute(registry, call('t', '{}'), testRuntime());
      expect(result.kind).toBe('invalid_input');
      expect(result.observation.text).toContain('team must be one of');
    }
  });

  it('honours "unavailable" only for query tools; for an effect it is fatal', async () => {
    const unavailable = async (): Promise<never> => {
      throw new ToolUnavailableError('the search provider timed out');
    };
    const query = createRegistry([testDefinition('search', { execute: unavailable })]);
    const result = await execute(query, call('search', '{}'), testRuntime());
    expect(result.kind).toBe('unavailable');
    expect(result.observation.text).toContain('timed out');

    const effect = createRegistry([
      testDefinition('post', { class: 'effect', replay: 'effectful', execute: unavailable }),
    ]);
    const error = await fatal(execute(effect, call('post', '{}'), testRuntime()));
    expect(error.failure.code).toBe('tool_unavailable');
  });

  it('serializes an untagged handler error as {code, message, data}, never a raw Error', async () => {
    const registry = createRegistry([
      testDefinition('t', {
        execute: async () => {
          throw new Error('connection refused');
        },
      }),
    ]);
    const error = await fatal(execute(registry, call('t', '{}'), testRuntime()));
    const json = JSON.parse(JSON.stringify(error)) as Record<string, unknown>;
    expect(json).toEqual({
      code: 'tool_failed',
      message: 'tool t failed: connection refused',
      data: {
        tool: 't',
        cause: { code: 'internal_error', message: 'connection refused', data: { name: 'Error' } },
      },
    });
  });

  it('refuses structured data that breaks the declared output schema', async () => {
    const registry = createRegistry([
      testDefinition('t', {
        outputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        execute: async () => ({ text: 'done', data: { id: 5 } }),
      }),
    ]);
    const error = await fatal(execute(registry, call('t', '{}'), testRuntime()));
    expect(error.failure.code).toBe('invalid_tool_output');
  });

  it('reports a failure or an unknown outcome as it is: its data is not held to the result schema', async () => {
    const schema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };
    const registry = createRegistry([
      testDefinition('failed', {
        outputSchema: schema,
        execute: async () => ({
          text: 'the call to acme could not be delivered',
          isError: true,
          data: { delivery: 'failed', error: 'acme could not be reached' },
        }),
      }),
      testDefinition('unsure', {
        outputSchema: schema,
        execute: async () => ({
          text: 'acme did not answer; the call may have happened',
          unknownOutcome: true,
          data: { delivery: 'unknown' },
        }),
      }),
    ]);
    const failed = await execute(registry, call('failed', '{}'), testRuntime());
    expect(failed.observation).toMatchObject({ kind: 'tool_error', data: { delivery: 'failed' } });
    const unsure = await execute(registry, call('unsure', '{}'), testRuntime());
    expect(unsure.observation).toMatchObject({ kind: 'unknown_outcome' });
  });

  it('only finds tools in the registry it is given (the selected one)', async () => {
    const full = createRegistry([testDefinition('a'), testDefinition('b')]);
    const selected = full.select((d) => d.tool.name === 'a');
    const result = await execute(selected, call('b', '{}'), testRuntime());
    expect(result.kind).toBe('unknown_tool');
    expect(result.observation.text).toContain('The tools you can call are: a.');
  });
});

describe('ctx.secret', () => {
  const runtime = {
    ...testRuntime(),
    secretFor: async (packageId: string, kind: string) =>
      packageId === 'test.package' && kind === 'vendor_token' ? 'tok-value' : undefined,
  };

  it('grants the kinds a tool needs, from the agent slot of its package', async () => {
    const registry = createRegistry([
      testDefinition('vendor_call', {
        needs: ['secret:vendor_token'],
        execute: async (ctx) => ({ text: `length ${(await ctx.secret('vendor_token')).length}` }),
      }),
    ]);
    const result = await execute(registry, call('vendor_call', '{}'), runtime);
    expect(result.observation).toMatchObject({ text: 'length 9' });
  });

  it('refuses a kind the tool does not declare, and a missing one, without a value', async () => {
    const registry = createRegistry([
      testDefinition('greedy', {
        needs: ['secret:other_token'],
        execute: async (ctx) => ({ text: await ctx.secret('vendor_token') }),
      }),
      testDefinition('unlucky', {
        needs: ['secret:other_token'],
        execute: async (ctx) => ({ text: await ctx.secret('other_token') }),
      }),
    ]);
    const greedy = await fatal(execute(registry, call('greedy', '{}'), runtime));
    expect(greedy.data).toMatchObject({ cause: { code: 'secret_not_granted' } });
    const unlucky = await fatal(execute(registry, call('unlucky', '{}'), runtime));
    expect(unlucky.data).toMatchObject({ cause: { code: 'secret_missing' } });
    expect(JSON.stringify([greedy, unlucky])).not.toContain('tok-value');
  });
});
