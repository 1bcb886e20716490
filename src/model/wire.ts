import type { JsonSchema } from './json.ts';

/**
 * What a model provider is shown of a tool: exactly the provider-visible part, nothing of Mesh's
 * policy. Every provider's wire format (Chat Completions, Anthropic, …) is a projection of this.
 */
export interface Tool {
  readonly name: string;
  readonly description: string;
  /** A JSON Schema (2020-12) whose top level is an object schema. */
  readonly parameters: JsonSchema;
}

/** One call the model asked for. `arguments` is the raw JSON text the model sent, undecoded. */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

export interface SystemMessage {
  readonly role: 'system';
  readonly content: string;
}

/** An image shown to a model that accepts image input: its bytes as base64, with their type. */
export interface ImagePart {
  /** `image/png`, `image/jpeg`, `image/gif` or `image/webp`. */
  readonly mediaType: string;
  readonly base64: string;
}

export interface UserMessage {
  readonly role: 'user';
  readonly content: string;
  /** Images after the text, only for a model that accepts image input. */
  readonly images?: readonly ImagePart[];
}

export interface AssistantMessage {
  readonly role: 'assistant';
  /** Text the model wrote; may be empty when it only called tools. */
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
}

/** The observation of one tool call, returned to the model under the call's id. */
export interface ToolResultMessage {
  readonly role: 'tool';
  readonly toolCallId: string;
  readonly content: string;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

/** Token accounting as the provider reported it. */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
}

/** Why the model stopped producing output. */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

/** A request to a model: messages plus the tools it may call (absent on the last permitted round). */
export interface ModelRequest {
  readonly model: string;
  readonly messages: readonly Message[];
  readonly tools: readonly Tool[];
}

/** What a model answered for one request. */
export interface ModelResponse {
  readonly message: AssistantMessage;
  readonly finishReason: FinishReason;
  readonly usage: Usage;
}
