import {
  INVALID_SPAN_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type AttributeValue,
  type Span,
} from '@opentelemetry/api';
import { serializeError } from './errors.ts';

/** The tracer's name: every span Mesh makes comes from it. */
export const TRACER_NAME = 'mesh';

/**
 * Every span attribute Mesh sets, in one place: the OpenTelemetry GenAI semantic conventions
 * where they name the thing, `mesh.*` for the rest. Values are identifiers, names, counts and
 * outcome kinds only: never arguments, results, message contents, prompts or secrets.
 */
export const SPAN_ATTRIBUTES = Object.freeze({
  operationName: 'gen_ai.operation.name',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  errorType: 'error.type',
  runId: 'mesh.run.id',
  runStatus: 'mesh.run.status',
  round: 'mesh.round',
  step: 'mesh.step',
  toolClass: 'mesh.tool.class',
  toolOutcome: 'mesh.tool.outcome',
} as const);

/** The GenAI operations Mesh traces (`gen_ai.operation.name`). */
export type GenAiOperation = 'invoke_agent' | 'chat' | 'execute_tool';

/** A span to open: its name, kind and the attributes known before the work starts. */
export interface SpanStart {
  readonly name: string;
  readonly kind: 'internal' | 'client';
  readonly operation: GenAiOperation;
  readonly attributes: Readonly<Record<string, AttributeValue | undefined>>;
}

/** What the work came to, for its span: more attributes, and `error` (an `error.type`) if it failed. */
export interface SpanOutcome {
  readonly attributes?: Readonly<Record<string, AttributeValue | undefined>>;
  readonly error?: string;
}

let tracing = false;

/**
 * Whether spans are made: set by the telemetry set-up when it registers a tracer provider (and
 * cleared when it unregisters it). Off, {@link withSpan} runs its work with no span at all, and
 * hot paths skip building their attributes.
 */
export function tracingEnabled(): boolean {
  return tracing;
}

export function setTracingEnabled(enabled: boolean): void {
  tracing = enabled;
}

/** The span work runs with while tracing is off: the API's non-recording span, made once. */
const NOT_TRACED: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

function defined(attributes: Readonly<Record<string, AttributeValue | undefined>>): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined));
}

/**
 * Runs `fn` inside a span of the `mesh` tracer, the span active for what `fn` calls (its children
 * nest under it), and records how it ended: `outcome(result)`'s attributes and error, or, when
 * `fn` throws, error status with the error's stable code as `error.type` (never its message,
 * which may quote the outside world). While tracing is off (no provider registered) `fn` runs
 * at once with a non-recording span: no tracer, context or attribute objects are made.
 */
export function withSpan<T>(
  start: SpanStart,
  fn: (span: Span) => Promise<T>,
  outcome?: (result: T) => SpanOutcome,
): Promise<T> {
  if (!tracing) return fn(NOT_TRACED);
  const tracer = trace.getTracer(TRACER_NAME);
  const options = {
    kind: start.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
    attributes: defined({ ...start.attributes, [SPAN_ATTRIBUTES.operationName]: start.operation }),
  };
  return tracer.startActiveSpan(start.name, options, async (span) => {
    try {
      const result = await fn(span);
      if (outcome && span.isRecording()) {
        const ended = outcome(result);
        if (ended.attributes) span.setAttributes(defined(ended.attributes));
        if (ended.error !== undefined) fail(span, ended.error);
      }
      return result;
    } catch (error) {
      fail(span, serializeError(error).code);
      throw error;
    } finally {
      span.end();
    }
  });
}

function fail(span: Span, errorType: string): void {
  span.setAttribute(SPAN_ATTRIBUTES.errorType, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
}
