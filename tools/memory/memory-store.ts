import { serviceKey } from '../../src/tool/context.ts';

/** A memory as the verbs report it back. */
export interface Memory {
  readonly id: string;
  readonly content: string;
  readonly status: 'active' | 'superseded' | 'forgotten';
  readonly createdAt: string;
}

/** Where a write happens and on whose behalf: filled by the runtime, never by the model. */
export interface MemoryCall {
  readonly agentId: string;
  readonly runId: string;
  readonly callId: string;
}

/**
 * What the memory verbs need from the runtime. Writes are idempotent per call (a resumed run that
 * re-runs an internal verb gets its first write back) and take provenance from the run's own
 * persisted records, which the implementation looks up; no parameter can name a source.
 */
export interface MemoryStore {
  remember(call: MemoryCall, content: string): Promise<Memory>;
  recall(agentId: string, query: string, limit: number): Promise<readonly Memory[]>;
  /** Undefined when `memoryId` is not an active memory of this agent. */
  amend(
    call: MemoryCall,
    memoryId: string,
    content: string,
  ): Promise<{ memory: Memory; superseded: Memory } | undefined>;
  forget(call: MemoryCall, memoryId: string, reason: string): Promise<Memory | undefined>;
}

export const MEMORY_STORE = serviceKey<MemoryStore>('mesh.memory.store');
