import type { JsonObject } from '../model/json.ts';
import type { Message, Tool } from '../model/wire.ts';
import { TokenCounter } from './token-count.ts';

/** A model's input budget for one request, in tokens. */
export interface InputBudget {
  /** The context window the provider accepts. */
  readonly contextTokens: number;
  /** Held back for the model's answer. */
  readonly reservedOutputTokens: number;
}

/** The parts of a request the budget prices, in tokens; persisted with each model-request step. */
export interface ContextEstimate {
  readonly system: number;
  readonly memory: number;
  readonly history: number;
  readonly tools: number;
  readonly current: number;
  /** The tool round so far: calls, observations and the ledger. */
  readonly round: number;
  readonly total: number;
  readonly budget: number;
  readonly droppedTurns: number;
  readonly systemTruncated: boolean;
  /** Older observations of the round reduced to an excerpt and where they are kept whole. */
  readonly reducedObservations: number;
}

/** What the engine hands the budget: everything that could go into the request. */
export interface ContextParts {
  /** Persona, instructions, settings and skills; gets what is left. */
  readonly system: string;
  /** The memory section of the system prompt; priced separately, trimmed before the rest. */
  readonly memory: string;
  /** Earlier turns of the conversation, oldest first. */
  readonly history: readonly Message[];
  /** The message this turn answers; never dropped. */
  readonly current: Message;
  /**
   * This turn's tool round so far (assistant calls, tool results, the ledger); never dropped.
   * Older tool results found in `kept` may be reduced to an excerpt and the place it names (where
   * the whole is kept) when the round would not leave room for the instructions.
   */
  readonly round: readonly Message[];
  readonly kept?: ReadonlyMap<Message, string>;
  readonly tools: readonly Tool[];
}

/** The request that fits, and what it cost. */
export interface FittedContext {
  readonly messages: readonly Message[];
  readonly estimate: ContextEstimate;
}

// Chat formats add a few tokens per message for roles and separators.
const PER_MESSAGE = 4;

/**
 * What one image is priced at. Providers price images by their pixels (OpenAI: 765 tokens for a
 * 1024×1024 image in high detail; Anthropic: about 1,600 for 1,092×1,092); Mesh does not decode
 * images to measure them, so every image is priced at the larger figure.
 */
export const IMAGE_TOKEN_ESTIMATE = 1600;

async function messageTokens(counter: TokenCounter, m: Message): Promise<number> {
  switch (m.role) {
    case 'assistant': {
      let n = PER_MESSAGE + (await counter.count(m.content));
      for (const c of m.toolCalls)
        n += (await counter.count(c.name)) + (await counter.count(c.arguments)) + 3;
      return n;
    }
    case 'user':
      return (
        PER_MESSAGE +
        (await counter.count(m.content)) +
        (m.images?.length ?? 0) * IMAGE_TOKEN_ESTIMATE
      );
    case 'system':
    case 'tool':
      return PER_MESSAGE + (await counter.count(m.content));
    default: {
      const never: never = m;
      return never;
    }
  }
}

async function sum(counter: TokenCounter, messages: readonly Message[]): Promise<number> {
  let n = 0;
  for (const m of messages) n += await messageTokens(counter, m);
  return n;
}

const toolTokenCache = new WeakMap<readonly Tool[], number>();

/**
 * Tokens of the tool schemas as they travel on the wire (a registry's list is frozen: cached).
 * Counted as `TokenCounter` counts (see there for the rule on very long texts).
 */
export async function toolTokens(
  tools: readonly Tool[],
  counter: TokenCounter = new TokenCounter(),
): Promise<number> {
  if (tools.length === 0) return 0;
  let n = toolTokenCache.get(tools);
  if (n === undefined) {
    n = await counter.count(JSON.stringify(tools));
    toolTokenCache.set(tools, n);
  }
  return n;
}

/** Memory kept beside the instructions when the round is reduced, in tokens. */
const REDUCE_KEEP_MEMORY = 256;
/** The excerpt a reduced observation keeps, in tokens. */
const REDUCED_EXCERPT = 120;
/** Tool rounds at the end of the round whose results are never reduced. */
const WHOLE_ROUNDS = 2;

/**
 * The round within `room` tokens, if it can be: from the oldest, each tool result `kept` names
 * (outside the last {@link WHOLE_ROUNDS} tool rounds) is replaced by its excerpt and where its
 * whole is kept, until the round fits. Nothing is dropped, and system messages (the ledger) are
 * never touched.
 */
async function reduceRound(
  counter: TokenCounter,
  round: readonly Message[],
  kept: ReadonlyMap<Message, string> | undefined,
  room: number,
): Promise<{ messages: readonly Message[]; tokens: number; count: number }> {
  let tokens = await sum(counter, round);
  if (tokens <= room || !kept || kept.size === 0) return { messages: round, tokens, count: 0 };
  const calls = round.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
  const whole = calls.at(-WHOLE_ROUNDS) ?? 0;
  const messages = [...round];
  let count = 0;
  for (let i = 0; i < whole && tokens > room; i++) {
    const m = messages[i];
    const where = m ? kept.get(m) : undefined;
    if (!m || m.role !== 'tool' || where === undefined) continue;
    const excerpt = await counter.cut(m.content, REDUCED_EXCERPT);
    const content = `[An older result, reduced to fit the context: its first lines follow; the whole of it is kept in this run, ${where}.]\n${excerpt}${excerpt.length < m.content.length ? '\n…' : ''}`;
    const before = await messageTokens(counter, m);
    const after = await messageTokens(counter, { ...m, content });
    if (after >= before) continue;
    messages[i] = { ...m, content };
    tokens += after - before;
    count++;
  }
  return { messages, tokens, count };
}

/** Groups history into turns: a turn starts at a user message; dropping is turn by turn. */
function turns(history: readonly Message[]): Message[][] {
  const out: Message[][] = [];
  for (const m of history) {
    if (m.role === 'user' || out.length === 0) out.push([m]);
    else out.at(-1)?.push(m);
  }
  return out;
}

/**
 * Fits a request into the model's input budget. Tool schemas, the current message and this turn's
 * round are priced first and never dropped; history keeps its newest turns that fit (the oldest
 * go first); the system prompt gets what is left, and when it does not fit, memory is trimmed
 * before the rest of it. Async because counting yields to the event loop on long texts.
 */
export async function fitContext(parts: ContextParts, budget: InputBudget): Promise<FittedContext> {
  const counter = new TokenCounter();
  const limit = Math.max(0, budget.contextTokens - budget.reservedOutputTokens);
  const tools = await toolTokens(parts.tools, counter);
  const current = await messageTokens(counter, parts.current);
  const systemFull = await counter.count(parts.system);
  const memoryFull = await counter.count(parts.memory);
  // The round leaves room for the instructions and a little memory, or its older observations
  // are reduced until it does (the newest calls' results are always shown whole).
  const roundRoom = limit - tools - current - 2 * PER_MESSAGE - systemFull - REDUCE_KEEP_MEMORY;
  const reduced = await reduceRound(counter, parts.round, parts.kept, roundRoom);
  const round = reduced.tokens;
  let left = limit - tools - current - round - PER_MESSAGE;

  // History competes with the system prompt; the system prompt's own text (without memory) is
  // reserved first so that instructions survive a long conversation.
  const kept: Message[][] = [];
  let history = 0;
  const all = turns(parts.history);
  const reserve = Math.min(systemFull, Math.max(0, left));
  for (let i = all.length - 1; i >= 0; i--) {
    const turn = all[i] ?? [];
    const cost = await sum(counter, turn);
    if (history + cost > left - reserve - Math.min(memoryFull, 256)) break;
    kept.unshift(turn);
    history += cost;
  }
  left -= history;

  let memory = parts.memory;
  let system = parts.system;
  let systemTruncated = false;
  if (systemFull + memoryFull > left) {
    systemTruncated = true;
    memory = await counter.cut(parts.memory, Math.max(0, left - systemFull));
    system = await counter.cut(parts.system, Math.max(0, left - (await counter.count(memory))));
  }
  const systemText = memory === '' ? system : `${system}\n\n${memory}`;
  const systemTokens = await counter.count(system);
  const memoryTokens = await counter.count(memory);
  const messages: Message[] = [
    ...(systemText === '' ? [] : [{ role: 'system' as const, content: systemText }]),
    ...kept.flat(),
    parts.current,
    ...reduced.messages,
  ];
  const total =
    systemTokens +
    memoryTokens +
    (systemText === '' ? 0 : PER_MESSAGE) +
    history +
    tools +
    current +
    round;
  return {
    messages,
    estimate: {
      system: systemTokens,
      memory: memoryTokens,
      history,
      tools,
      current,
      round,
      total,
      budget: limit,
      droppedTurns: all.length - kept.length,
      systemTruncated,
      reducedObservations: reduced.count,
    },
  };
}

/** The estimate as stored in a step. */
export function estimateJson(e: ContextEstimate): JsonObject {
  return { ...e };
}
