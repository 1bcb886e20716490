import type { JsonObject, JsonValue } from '../model/json.ts';
import type { AssistantMessage, Message, ToolCall } from '../model/wire.ts';
import { artifactLinksFrom } from '../run/observation-json.ts';
import type { MessageRecord, ModelResponseStep, StepRecord } from '../run/records.ts';
import type { ArtifactLink } from '../tool/observation.ts';
import type { RoundImage } from './round-images.ts';

/*
 * A turn's messages as the model reads them, rebuilt from what is recorded: the conversation's
 * history, and this turn's rounds from its steps.
 */

/**
 * The message made of each record, made once: a record never changes, and every request of a turn
 * rebuilds its messages from the same records, so each later request hands on the same message
 * objects (what is worked out from a message, such as its prompt snapshot part, is then reused).
 */
const made = new WeakMap<object, Message>();

function once<T extends Message>(record: MessageRecord | StepRecord, make: () => T): T {
  let message = made.get(record) as T | undefined;
  if (message === undefined) made.set(record, (message = make()));
  return message;
}

/** The conversation's messages, each attributed to its actor. */
export function historyMessages(history: readonly MessageRecord[]): Message[] {
  return history.map((m) =>
    once(m, (): Message =>
      m.direction === 'inbound'
        ? { role: 'user', content: m.actor ? `${m.actor}: ${m.body}` : m.body }
        : { role: 'assistant', content: m.body, toolCalls: [] },
    ),
  );
}

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

export function responseFrom(step: ModelResponseStep): AssistantMessage {
  const data = step.data;
  const calls = Array.isArray(data['toolCalls']) ? (data['toolCalls'] as JsonObject[]) : [];
  return {
    role: 'assistant',
    content: typeof data['content'] === 'string' ? data['content'] : '',
    toolCalls: calls.map((c) => ({
      id: text(c['id']),
      name: text(c['name']),
      arguments: text(c['arguments']),
    })),
  };
}

/**
 * This turn's round so far, rebuilt from its steps: assistant calls and their observations, and
 * where the images the observations link would go (after the tool messages of their round).
 */
export function roundMessages(steps: readonly StepRecord[]): {
  messages: Message[];
  images: RoundImage[];
  /** Each observation's message, with where the whole of it is kept (for reducing it). */
  kept: Map<Message, string>;
} {
  const out: Message[] = [];
  const images: RoundImage[] = [];
  const kept = new Map<Message, string>();
  let pending: ArtifactLink[] = [];
  const flush = () => {
    for (const link of pending) images.push({ afterIndex: out.length, link });
    pending = [];
  };
  for (const step of steps) {
    if (step.kind === 'model_response') {
      flush();
      const message = once(step, () => responseFrom(step));
      if (message.toolCalls.length > 0) out.push(message);
    } else if (step.kind === 'observation' && step.callId) {
      const { callId } = step;
      const text = step.observation['text'];
      const message = once(step, (): Message => ({
        role: 'tool',
        toolCallId: callId,
        content: typeof text === 'string' ? text : '',
      }));
      out.push(message);
      kept.set(message, keptAt(step.seq, step.observation));
      pending.push(...artifactLinksFrom(step.observation).filter((l) => l.kind === 'image'));
    }
  }
  flush();
  return { messages: out, images, kept };
}

/** Where an observation is kept whole: its step, and the artifact holding its full output. */
function keptAt(seq: number, observation: JsonObject): string {
  const truncated = observation['truncated'];
  const artifact =
    typeof truncated === 'object' && truncated !== null && !Array.isArray(truncated)
      ? (truncated as JsonObject)['artifactId']
      : undefined;
  return typeof artifact === 'string'
    ? `step ${seq}, artifact ${artifact} (its whole output)`
    : `step ${seq}`;
}

export function callsJson(calls: readonly ToolCall[]): JsonValue[] {
  return calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
}
