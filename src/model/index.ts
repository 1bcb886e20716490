export type { CompleteOptions, ModelClient, ModelFailure } from './client.ts';
export type { JsonObject, JsonSchema, JsonValue } from './json.ts';
export type {
  AssistantMessage,
  FinishReason,
  Message,
  ModelRequest,
  ModelResponse,
  SystemMessage,
  Tool,
  ToolCall,
  ToolResultMessage,
  Usage,
  ImagePart,
  UserMessage,
} from './wire.ts';
