import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { InvalidToolInputError } from '../../src/tool/errors.ts';
import type { JsonObject } from '../../src/model/json.ts';
import { MEMORY_STORE, type Memory, type MemoryCall } from './memory-store.ts';

function callOf(ctx: ToolContext): MemoryCall {
  return { agentId: ctx.agentId, runId: ctx.runId, callId: ctx.callId };
}

function memoryJson(m: Memory): JsonObject {
  return { id: m.id, content: m.content, status: m.status, created_at: m.createdAt };
}

// The arguments were decoded against the manifest's schema before a handler runs, so the fields
// below are present and of the declared kinds.

/** Creates a memory. It cannot modify one: correction is `amend`. */
export async function remember(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const memory = await ctx.services
    .get(MEMORY_STORE)
    .remember(callOf(ctx), args['content'] as string);
  return { text: `Remembered as memory ${memory.id}.`, data: { remembered: memoryJson(memory) } };
}

/** Finds the agent's own active memories by full-text search. */
export async function recall(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const limit = typeof args['limit'] === 'number' ? args['limit'] : 5;
  const found = await ctx.services
    .get(MEMORY_STORE)
    .recall(ctx.agentId, args['query'] as string, limit);
  const text =
    found.length === 0
      ? 'No memories matched.'
      : found.map((m) => `- [${m.id}] ${m.content}`).join('\n');
  return { text, data: { memories: found.map(memoryJson) } };
}

/** Supersedes one active memory with new content; the old one stays in the chain. */
export async function amend(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const result = await ctx.services
    .get(MEMORY_STORE)
    .amend(callOf(ctx), args['memory_id'] as string, args['content'] as string);
  if (!result) {
    throw new InvalidToolInputError(
      'field `memory_id` does not name an active memory of yours; recall to find current ids',
    );
  }
  return {
    text: `Memory ${result.superseded.id} was superseded by memory ${result.memory.id}.`,
    data: { amended: memoryJson(result.memory), superseded: memoryJson(result.superseded) },
  };
}

/** Retires one active memory, with a reason. */
export async function forget(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const memory = await ctx.services
    .get(MEMORY_STORE)
    .forget(callOf(ctx), args['memory_id'] as string, args['reason'] as string);
  if (!memory) {
    throw new InvalidToolInputError(
      'field `memory_id` does not name an active memory of yours; recall to find current ids',
    );
  }
  return { text: `Memory ${memory.id} is forgotten.`, data: { forgotten: memoryJson(memory) } };
}
