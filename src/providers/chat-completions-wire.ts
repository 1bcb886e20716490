import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type {
  FinishReason,
  Message,
  ModelRequest,
  ModelResponse,
  ToolCall,
  Usage,
} from '../model/wire.ts';

/**
 * Projects our request onto a Chat Completions body. With no tools the body carries neither
 * `tools` nor `tool_choice`: the last permitted round is bounded by the bytes sent, not by asking
 * the model nicely. `tool_choice` is never sent; "auto" is the default wherever tools exist.
 */
export function toChatCompletionsBody(
  request: ModelRequest,
  model: string,
): ChatCompletionCreateParamsNonStreaming {
  const body: ChatCompletionCreateParamsNonStreaming = {
    model,
    messages: request.messages.map(toWireMessage),
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  return body;
}

function toWireMessage(message: Message): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      if (!message.images || message.images.length === 0)
        return { role: 'user', content: message.content };
      // Chat Completions carries images only in user messages, as data: URLs.
      return {
        role: 'user',
        content: [
          { type: 'text', text: message.content },
          ...message.images.map((image) => ({
            type: 'image_url' as const,
            image_url: { url: `data:${image.mediaType};base64,${image.base64}` },
          })),
        ],
      };
    case 'assistant':
      if (message.toolCalls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        // OpenAI documents content as optional beside tool calls, and some upstreams behind
        // routers refuse an empty text block, so an empty text travels as null.
        content: message.content === '' ? null : message.content,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          // The model's own text goes back unchanged: re-serializing would rewrite what it said.
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    default: {
      const _never: never = message;
      return _never;
    }
  }
}

/** A parsed completion, or why the body is not one (naming fields, never their values). */
export type ParsedCompletion =
  | { readonly kind: 'completion'; readonly response: ModelResponse }
  | { readonly kind: 'invalid'; readonly reason: string };

const FINISH_REASONS: ReadonlySet<string> = new Set([
  'stop',
  'tool_calls',
  'length',
  'content_filter',
]);

/**
 * Reads the first choice of a Chat Completions response body. The body is treated as untrusted
 * JSON: OpenAI-compatible servers differ, and a half-formed tool call must fail here rather than
 * reach the executor.
 */
export function fromChatCompletion(body: unknown): ParsedCompletion {
  const invalid = (reason: string): ParsedCompletion => ({ kind: 'invalid', reason });
  if (!isObject(body)) return invalid('the response body is not a JSON object');
  const choices = body['choices'];
  if (!Array.isArray(choices) || choices.length === 0)
    return invalid('the response has no choices');
  const choice: unknown = choices[0];
  if (!isObject(choice) || !isObject(choice['message'])) {
    return invalid('choices[0] has no message object');
  }
  const message = choice['message'];
  const content = message['content'];
  if (content !== undefined && content !== null && typeof content !== 'string') {
    return invalid('choices[0].message.content is neither text nor null');
  }
  const toolCalls = readToolCalls(message['tool_calls']);
  if (typeof toolCalls === 'string') return invalid(toolCalls);
  const reason = choice['finish_reason'];
  const finishReason: FinishReason =
    typeof reason === 'string' && FINISH_REASONS.has(reason) ? (reason as FinishReason) : 'other';
  return {
    kind: 'completion',
    response: {
      message: { role: 'assistant', content: content ?? '', toolCalls },
      finishReason,
      usage: readUsage(body['usage']),
    },
  };
}

/** The calls, or a reason they are malformed. */
function readToolCalls(value: unknown): readonly ToolCall[] | string {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return 'choices[0].message.tool_calls is not an array';
  const calls: ToolCall[] = [];
  for (const [i, raw] of value.entries()) {
    const where = `choices[0].message.tool_calls[${i}]`;
    if (!isObject(raw)) return `${where} is not an object`;
    const { id, type, function: fn } = raw;
    if (typeof id !== 'string' || id === '') return `${where}.id is missing or not a string`;
    // Absent `type` is tolerated (some servers omit it); any other kind is a tool we never offered.
    if (type !== undefined && type !== 'function') return `${where}.type is not "function"`;
    if (!isObject(fn)) return `${where}.function is not an object`;
    const { name, arguments: args } = fn;
    if (typeof name !== 'string' || name === '') {
      return `${where}.function.name is missing or not a string`;
    }
    // Arguments stay the raw text the model wrote; decoding them is the executor's job.
    if (typeof args !== 'string') return `${where}.function.arguments is not a string`;
    if (calls.some((call) => call.id === id)) return `${where}.id repeats an earlier call's id`;
    calls.push({ id, name, arguments: args });
  }
  return calls;
}

function readUsage(value: unknown): Usage {
  const count = (key: string): number => {
    const n = isObject(value) ? value[key] : undefined;
    return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : 0;
  };
  return {
    inputTokens: count('prompt_tokens'),
    outputTokens: count('completion_tokens'),
    totalTokens: count('total_tokens'),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
