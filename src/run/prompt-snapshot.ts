import { createHash } from 'node:crypto';
import { isJsonObject, type JsonObject, type JsonValue } from '../model/json.ts';
import type { Redactor } from '../tool/redaction.ts';

/*
 * The prompt snapshot: what a model request sent, exactly — the messages (after redaction), the
 * tool definitions offered and the model's parameters — kept with the request's step. It is
 * stored content-addressed, a part per message and one for the tool list, so what every request
 * of a run repeats (the persona, the history, the same twenty tools) is stored once: the step
 * names its parts by hash.
 */

/** A model request's input as the engine sent it. */
export interface PromptInput {
  readonly messages: readonly JsonValue[];
  readonly tools: readonly JsonValue[];
  /** The model and the parameters the request carried (never a credential). */
  readonly params: JsonObject;
}

/** One stored part: its hash (sha256 of its canonical JSON) and its body. */
export interface PromptPart {
  readonly hash: string;
  readonly body: JsonValue;
}

/** What the request's step records: its parts by hash, in order, and the parameters. */
export interface PromptRef {
  readonly messages: readonly string[];
  readonly tools: string;
  readonly params: JsonObject;
}

/** JSON with object keys in byte order, so equal content has one hash. */
function canonical(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (isList(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k] as JsonValue)}`).join(',')}}`;
}

function isList(value: JsonValue): value is readonly JsonValue[] {
  return Array.isArray(value);
}

function partOf(body: JsonValue): PromptPart {
  return { hash: createHash('sha256').update(canonical(body), 'utf8').digest('hex'), body };
}

/**
 * Parts already made, by the redactor that redacted them and the value they were made of. A turn
 * sends the same message objects and tool list request after request (its messages are never
 * changed once made), so each is redacted, serialized and hashed once, not once per request.
 */
const made = new WeakMap<Redactor, { generation: number; parts: WeakMap<object, PromptPart> }>();

function partFor(value: JsonValue | readonly JsonValue[], redactor: Redactor): PromptPart {
  if (value === null || typeof value !== 'object') return partOf(redactor.json(value));
  let cache = made.get(redactor);
  // A secret held since: what was made before may show it, so everything is made again.
  if (cache?.generation !== redactor.generation)
    made.set(redactor, (cache = { generation: redactor.generation, parts: new WeakMap() }));
  let part = cache.parts.get(value);
  if (part === undefined) {
    part = partOf(redactor.json(isList(value) ? [...value] : value));
    cache.parts.set(value, part);
  }
  return part;
}

/** The parts of a request's input (redacted first) and the reference its step keeps. */
export function snapshotParts(
  input: PromptInput,
  redactor: Redactor,
): { ref: PromptRef; parts: PromptPart[] } {
  const messages = input.messages.map((m) => partFor(m, redactor));
  const tools = partFor(input.tools, redactor);
  return {
    ref: {
      messages: messages.map((p) => p.hash),
      tools: tools.hash,
      params: redactor.json<JsonObject>(input.params),
    },
    parts: [...messages, tools],
  };
}

/** The reference a request step's data holds, or undefined (a request written before snapshots). */
export function promptRefOf(data: JsonObject): PromptRef | undefined {
  const prompt = data['prompt'];
  if (!isJsonObject(prompt)) return undefined;
  const { messages, tools, params } = prompt;
  if (messages === undefined || !isList(messages) || typeof tools !== 'string') return undefined;
  return {
    messages: messages.filter((m): m is string => typeof m === 'string'),
    tools,
    params: isJsonObject(params) ? params : {},
  };
}
