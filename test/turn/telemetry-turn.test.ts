import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { registerTracing } from '../../src/app/telemetry.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import { freshPglite } from '../support/db.ts';
import { invoke } from '../../src/tool/executor.ts';
import { testDefinition, testOrigin, testRuntime } from '../support/tool.ts';
import { scriptedAgent, testInstanceKey } from '../support/turn.ts';

const CANARY = 'canary-7f3a9c-do-not-trace';

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

describe('a traced turn', () => {
  let mesh: Mesh;
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  let unregister: () => void;
  beforeAll(async () => {
    mesh = assembleMesh(await freshPglite(), testInstanceKey());
    unregister = registerTracing(provider);
  });
  afterAll(async () => {
    unregister();
    await provider.shutdown();
    await mesh.close();
  });

  it('spans the turn, each model request and the tool call, with ids, counts and outcomes only', async () => {
    const agentId = await scriptedAgent(
      mesh,
      {
        rules: [
          {
            match: 'remember that (.+)',
            rounds: [
              { toolCalls: [{ name: 'remember', arguments: { content: '$1' } }] },
              { content: 'Noted: $1.' },
            ],
          },
        ],
      },
      'tracer',
    );
    const result = await chat(mesh, {
      agentId,
      actor: 'ada',
      body: `remember that the vault code is ${CANARY}`,
    });
    expect(result.status).toBe('succeeded');
    expect(result.reply).toContain(CANARY);

    const spans = exporter.getFinishedSpans();
    const turn = spans.find((s) => s.name === 'invoke_agent tracer');
    expect(turn).toBeDefined();
    if (!turn) return;
    expect(turn.kind).toBe(SpanKind.INTERNAL);
    expect(parentOf(turn)).toBeUndefined();
    expect(turn.instrumentationScope.name).toBe('mesh');
    expect(turn.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'tracer',
      'gen_ai.agent.id': agentId,
      'gen_ai.conversation.id': result.conversationId,
      'mesh.run.id': result.runId,
      'mesh.run.status': 'succeeded',
    });
    expect(turn.status.code).not.toBe(SpanStatusCode.ERROR);

    const inTurn = spans.filter((s) => s.spanContext().traceId === turn.spanContext().traceId);
    expect(inTurn.map((s) => s.name)).toEqual([
      'chat scripted-1',
      'execute_tool remember',
      'chat scripted-1',
      'invoke_agent tracer',
    ]);
    for (const child of inTurn.filter((s) => s !== turn)) {
      expect(parentOf(child)).toBe(turn.spanContext().spanId);
    }

    const requestSteps = result.steps.filter((s) => s.kind === 'model_request');
    const responses = result.steps.filter((s) => s.kind === 'model_response');
    const [first, , second] = inTurn;
    for (const [i, request] of [first, second].entries()) {
      const usage = responses[i]?.data['usage'] as { inputTokens: number; outputTokens: number };
      expect(request?.kind).toBe(SpanKind.CLIENT);
      expect(request?.attributes).toEqual({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'scripted',
        'gen_ai.request.model': 'scripted-1',
        'gen_ai.response.finish_reasons': [i === 0 ? 'tool_calls' : 'stop'],
        'gen_ai.usage.input_tokens': usage.inputTokens,
        'gen_ai.usage.output_tokens': usage.outputTokens,
        'mesh.run.id': result.runId,
        'mesh.round': i + 1,
        'mesh.step': requestSteps[i]?.seq,
      });
      expect(usage.inputTokens).toBeGreaterThan(0);
    }

    const tool = inTurn[1];
    const callStep = result.steps.find((s) => s.kind === 'tool_call');
    expect(tool?.kind).toBe(SpanKind.INTERNAL);
    expect(tool?.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'remember',
      'gen_ai.tool.call.id': callStep?.callId,
      'gen_ai.tool.type': 'function',
      'mesh.tool.class': 'query',
      'mesh.tool.outcome': 'result',
      'mesh.run.id': result.runId,
      'mesh.step': callStep?.seq,
    });

    // The canary was in the message, the tool's arguments, its result and the reply: no span
    // carries it anywhere (name, attributes, events, links, status).
    expect(JSON.stringify(result.steps)).toContain(CANARY);
    for (const span of spans) {
      const exported = JSON.stringify({
        name: span.name,
        attributes: span.attributes,
        events: span.events,
        links: span.links,
        status: span.status,
        resource: span.resource.attributes,
      });
      expect(exported).not.toContain(CANARY);
      expect(exported).not.toContain('vault code');
    }
  });

  it('a remote tool is an extension, and a fatal handler error is error status by its code alone', async () => {
    exporter.reset();
    const definition = testDefinition('remote_probe', {
      class: 'effect',
      replay: 'effectful',
      origin: { ...testOrigin, source: 'remote' },
      execute: () => Promise.reject(new Error(`upstream said ${CANARY}`)),
    });
    const call = { id: 'call_9', name: 'remote_probe', arguments: `{"q":"${CANARY}"}` };
    await expect(invoke(definition, { q: CANARY }, call, testRuntime(), 4)).rejects.toMatchObject({
      code: 'tool_failed',
    });
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('execute_tool remote_probe');
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'tool_failed' });
    expect(span?.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'remote_probe',
      'gen_ai.tool.call.id': 'call_9',
      'gen_ai.tool.type': 'extension',
      'mesh.tool.class': 'effect',
      'mesh.run.id': 'run-1',
      'mesh.step': 4,
      'error.type': 'tool_failed',
    });
    expect(JSON.stringify([span?.attributes, span?.events, span?.status])).not.toContain(CANARY);
  });
});
