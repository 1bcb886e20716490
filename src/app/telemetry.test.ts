import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { registerTracing, startTelemetry, tracingConfigured } from './telemetry.ts';
import { MeshError } from '../tool/errors.ts';
import { tracingEnabled, withSpan, type SpanStart } from '../tool/tracing.ts';

const start: SpanStart = {
  name: 'execute_tool probe',
  kind: 'client',
  operation: 'execute_tool',
  attributes: { 'gen_ai.tool.name': 'probe', 'mesh.step': undefined },
};

describe('withSpan', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  let unregister: () => void;
  beforeAll(() => {
    unregister = registerTracing(provider);
  });
  afterAll(async () => {
    unregister();
    await provider.shutdown();
  });
  beforeEach(() => exporter.reset());

  it('records the outcome, drops undefined attributes, and nests what runs inside', async () => {
    const result = await withSpan(
      start,
      async () => {
        await new Promise((resolve) => setImmediate(resolve));
        return withSpan({ ...start, name: 'inner' }, () => Promise.resolve(42));
      },
      (n) => ({ attributes: { 'mesh.tool.outcome': n === 42 ? 'result' : 'other' } }),
    );
    expect(result).toBe(42);
    const [inner, outer] = exporter.getFinishedSpans();
    expect(outer?.kind).toBe(SpanKind.CLIENT);
    expect(outer?.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'probe',
      'mesh.tool.outcome': 'result',
    });
    expect(inner?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
  });

  it('a failure is error status with its stable code, never its message', async () => {
    const thrown = new MeshError('tool_failed', 'the handler saw secret-value-123');
    await expect(withSpan(start, () => Promise.reject(thrown))).rejects.toBe(thrown);
    const [span] = exporter.getFinishedSpans();
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'tool_failed' });
    expect(span?.attributes['error.type']).toBe('tool_failed');
    expect(JSON.stringify([span?.attributes, span?.events, span?.status])).not.toContain(
      'secret-value-123',
    );
  });

  it('an outcome can fail the span without a throw', async () => {
    await withSpan(
      start,
      () => Promise.resolve('failed'),
      () => ({ error: 'turn_failed' }),
    );
    expect(exporter.getFinishedSpans()[0]?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('without a registered provider, spans are the no-op API and record nothing', async () => {
    unregister();
    try {
      expect(tracingEnabled()).toBe(false);
      // Untraced, no tracer is even asked for: the work runs at once with the non-recording span.
      const getTracer = vi.spyOn(trace, 'getTracer');
      await withSpan(start, (span) => {
        expect(span.isRecording()).toBe(false);
        return Promise.resolve();
      });
      expect(getTracer).not.toHaveBeenCalled();
      getTracer.mockRestore();
      expect(exporter.getFinishedSpans()).toEqual([]);
      expect(trace.getActiveSpan()).toBeUndefined();
    } finally {
      unregister = registerTracing(provider);
    }
  });
});

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The packages a module loads when it is imported: its static imports of values, followed through
 * relative ones (a dynamic `import()` and an `import type` load nothing at start-up).
 */
function loadedAtStartUp(entry: string, followDynamic = false): Set<string> {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    const specifiers: string[] = [];
    const walk = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
        specifiers.push((node.moduleSpecifier as ts.StringLiteral).text);
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) {
        specifiers.push((node.moduleSpecifier as ts.StringLiteral).text);
      } else if (
        followDynamic &&
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        specifiers.push(node.arguments[0].text);
      }
      ts.forEachChild(node, walk);
    };
    walk(source);
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return packages;
}

/** The API, and the context manager over AsyncLocalStorage it needs (one small module), are light. */
const LIGHT = new Set(['@opentelemetry/api', '@opentelemetry/context-async-hooks']);
const sdk = (packages: Set<string>) =>
  [...packages].filter((p) => p.startsWith('@opentelemetry/') && !LIGHT.has(p));

describe('tracing when not configured', () => {
  it('needs an OTLP endpoint, and honours the standard off switches', () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/v1/traces' })).toBe(
      true,
    );
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(tracingConfigured({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingConfigured({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });

  it('registers nothing: spans stay the API no-op', async () => {
    expect(await startTelemetry('0.0.0', {})).toBeUndefined();
    const tracer = trace.getTracer('mesh');
    const span = tracer.startSpan('probe');
    expect(span.isRecording()).toBe(false);
    span.end();
  });

  it('the SDK and the exporter are not imported at start-up, by the CLI or the engine', () => {
    for (const entry of ['../cli/main.ts', '../cli/serve.ts', '../cli/chat.ts', './serve.ts']) {
      expect(sdk(loadedAtStartUp(resolve(here, entry)))).toEqual([]);
    }
  });

  it('the check catches what it is meant to catch', () => {
    expect(sdk(loadedAtStartUp(resolve(here, 'telemetry.ts'), true))).toEqual([
      '@opentelemetry/sdk-trace-base',
      '@opentelemetry/resources',
      '@opentelemetry/exporter-trace-otlp-http',
    ]);
    expect(loadedAtStartUp(resolve(here, '../turn/engine.ts'))).toContain('@opentelemetry/api');
  });
});
