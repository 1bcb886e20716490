import { randomUUID } from 'node:crypto';
import type { Db } from '../../store/db.ts';
import {
  amendMemory,
  forgetMemory,
  hasMemoryCode,
  rememberForCall,
  searchMemories,
  type MemoryRow,
  type MemoryWrite,
} from '../../store/memories.ts';
import { getRun } from '../../store/runs.ts';
import {
  MEMORY_STORE,
  type Memory,
  type MemoryCall,
  type MemoryStore,
} from '../../../tools/memory/memory-store.ts';
import type { MeshServiceFactory } from '../service-host.ts';

function toMemory(row: MemoryRow): Memory {
  return {
    id: row.id,
    content: row.content,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * The memory verbs' store over the database. Provenance is read from the run the call belongs to
 * (its inbound message, or the operator who invoked it), never from anything the model sent.
 */
export function memoryStore(db: Db): MemoryStore {
  async function writeFor(call: MemoryCall): Promise<MemoryWrite> {
    const run = await getRun(db, call.runId);
    if (!run || run.agentId !== call.agentId)
      throw new Error(`run ${call.runId} does not belong to this agent`);
    return {
      agentId: call.agentId,
      provenance: run.provenance,
      sourceMessageId: run.inboundMessageId,
      runId: call.runId,
      callId: call.callId,
    };
  }
  return {
    async remember(call, content) {
      const written = await rememberForCall(db, randomUUID(), call, content);
      if (written) return toMemory(written);
      // Not written: say why as every other verb does.
      await writeFor(call);
      throw new Error(`the memory of call ${call.callId} was not written`);
    },
    async recall(agentId, query, limit) {
      return (await searchMemories(db, agentId, query, limit)).map(toMemory);
    },
    async amend(call, memoryId, content) {
      try {
        const result = await amendMemory(db, randomUUID(), await writeFor(call), memoryId, content);
        return { memory: toMemory(result.memory), superseded: toMemory(result.superseded) };
      } catch (error) {
        if (hasMemoryCode(error)) return undefined;
        throw error;
      }
    },
    async forget(call, memoryId, reason) {
      try {
        return toMemory(await forgetMemory(db, await writeFor(call), memoryId, reason));
      } catch (error) {
        if (hasMemoryCode(error)) return undefined;
        throw error;
      }
    },
  };
}

/** The memory package's store, as the services seam builds it. */
export const memoryStoreService: MeshServiceFactory<MemoryStore> = {
  key: MEMORY_STORE,
  create: ({ db }) => memoryStore(db),
};
