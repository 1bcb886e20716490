import { randomUUID } from 'node:crypto';
import type { ModelClient } from '../model/client.ts';
import type { JsonObject, JsonValue } from '../model/json.ts';
import type { Message, ModelRequest, ModelResponse, ToolCall } from '../model/wire.ts';
import { MeshError } from '../tool/errors.ts';
import { MAX_MATCH_CHARS, unsafePatternReason } from './safe-pattern.ts';

/** One scripted model turn: text, tool calls, or both. */
export interface ScriptedReply {
  readonly content?: string;
  /** `arguments` as an object is serialized; as a string it is sent raw (to script bad JSON). */
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: JsonValue }[];
}

/**
 * A scripted provider for tests and demos. Stateless: the reply depends only on the request.
 * - `responses[k]` answers round k+1 of a turn (k = assistant messages since the last user message);
 * - `rules` match the turn's user message (a regular expression); `$1`… in the replies (text, tool
 *   names and arguments) are replaced
 *   by its groups; each rule's `rounds[k]` answers round k+1. A pattern must pass the static
 *   backtracking check of `safe-pattern.ts` (refused at capture, naming the rule), and is matched
 *   against the message's first MAX_MATCH_CHARS characters only;
 * - `fallback` answers anything else.
 */
export interface Script {
  readonly responses?: readonly ScriptedReply[];
  readonly rules?: readonly {
    readonly match: string;
    readonly flags?: string;
    readonly rounds: readonly ScriptedReply[];
  }[];
  readonly fallback?: ScriptedReply;
}

/** Refuses a script that is not of the documented shape, naming where. */
export function parseScript(json: unknown): Script {
  const fail = (where: string, what: string): never => {
    throw new MeshError('invalid_script', `scripted provider: ${where} ${what}`);
  };
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    fail('the script', 'must be a JSON object');
  const script = json as Record<string, unknown>;
  for (const key of Object.keys(script)) {
    if (!['responses', 'rules', 'fallback'].includes(key))
      fail(`field ${JSON.stringify(key)}`, 'is not known');
  }
  const reply = (value: unknown, where: string): void => {
    if (typeof value !== 'object' || value === null) fail(where, 'must be an object');
    const r = value as Record<string, unknown>;
    if (r['content'] !== undefined && typeof r['content'] !== 'string')
      fail(`${where}.content`, 'must be a string');
    if (r['toolCalls'] !== undefined) {
      if (!Array.isArray(r['toolCalls'])) fail(`${where}.toolCalls`, 'must be an array');
      (r['toolCalls'] as unknown[]).forEach((c, i) => {
        if (typeof (c as Record<string, unknown> | null)?.['name'] !== 'string')
          fail(`${where}.toolCalls[${i}].name`, 'must be a string');
      });
    }
  };
  if (script['responses'] !== undefined) {
    if (!Array.isArray(script['responses'])) fail('responses', 'must be an array');
    (script['responses'] as unknown[]).forEach((r, i) => reply(r, `responses[${i}]`));
  }
  if (script['rules'] !== undefined) {
    if (!Array.isArray(script['rules'])) fail('rules', 'must be an array');
    (script['rules'] as unknown[]).forEach((rule, i) => {
      const r = rule as Record<string, unknown>;
      if (typeof r['match'] !== 'string') fail(`rules[${i}].match`, 'must be a string');
      if (r['flags'] !== undefined && typeof r['flags'] !== 'string')
        fail(`rules[${i}].flags`, 'must be a string');
      const flags = (r['flags'] as string | undefined) ?? '';
      try {
        new RegExp(r['match'] as string, flags);
      } catch {
        fail(`rules[${i}].match`, 'is not a valid regular expression');
      }
      const unsafe = unsafePatternReason(r['match'] as string, flags);
      if (unsafe !== undefined)
        fail(`rules[${i}].match`, `is refused: it ${unsafe} (it could stall the server)`);
      if (!Array.isArray(r['rounds'])) fail(`rules[${i}].rounds`, 'must be an array');
      (r['rounds'] as unknown[]).forEach((x, k) => reply(x, `rules[${i}].rounds[${k}]`));
    });
  }
  if (script['fallback'] !== undefined) reply(script['fallback'], 'fallback');
  return script;
}

function lastUserIndex(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === 'user') return i;
  return -1;
}

function substitute(
  text: string,
  groups: readonly string[],
  escape: (s: string) => string,
): string {
  return text.replace(/\$(\d)/g, (_, n: string) => escape(groups[Number(n)] ?? ''));
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The scripted client. Its usage figures are rough (four characters a token). Call ids count up
 * per client under a random prefix: readable in a transcript, and unique even across clients (a
 * run resumed by another process gets a new client whose count starts again).
 */
export function scriptedClient(script: Script): ModelClient {
  const idPrefix = randomUUID().slice(0, 8);
  let callCounter = 0;
  return {
    kind: 'scripted',
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const userAt = lastUserIndex(request.messages);
      const userText = userAt >= 0 ? (request.messages[userAt] as { content: string }).content : '';
      const round = request.messages.slice(userAt + 1).filter((m) => m.role === 'assistant').length;
      let reply: ScriptedReply | undefined;
      let groups: string[] = [];
      for (const rule of script.rules ?? []) {
        const match = new RegExp(rule.match, rule.flags ?? '').exec(
          userText.slice(0, MAX_MATCH_CHARS),
        );
        if (match) {
          groups = [...match].map((g) => g ?? '');
          reply = rule.rounds[round] ?? rule.rounds.at(-1);
          break;
        }
      }
      reply ??= script.responses?.[round] ?? script.fallback ?? { content: '' };
      const toolCalls: ToolCall[] = (request.tools.length === 0 ? [] : (reply.toolCalls ?? [])).map(
        (c) => ({
          id: `call_${++callCounter}_${idPrefix}`,
          name: substitute(c.name, groups, (s) => s),
          arguments:
            typeof c.arguments === 'string'
              ? c.arguments
              : substitute(JSON.stringify(c.arguments as JsonObject), groups, (s) =>
                  JSON.stringify(s).slice(1, -1),
                ),
        }),
      );
      const content = substitute(reply.content ?? '', groups, (s) => s);
      const input =
        estimateTokens(JSON.stringify(request.messages)) +
        estimateTokens(JSON.stringify(request.tools));
      const output = estimateTokens(content) + estimateTokens(JSON.stringify(toolCalls));
      return {
        message: { role: 'assistant', content, toolCalls },
        finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
        usage: { inputTokens: input, outputTokens: output, totalTokens: input + output },
      };
    },
  };
}
