import { context, trace, type TracerProvider } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { setTracingEnabled } from '../tool/tracing.ts';

/*
 * Tracing set-up: the one module that knows the OpenTelemetry SDK. The instrumented code
 * (src/tool/tracing.ts and its callers) speaks only the API, whose spans are no-ops until a
 * provider is registered here. The SDK and the exporter are imported only when the operator
 * configured an OTLP endpoint, so an unconfigured process neither loads nor pays for them.
 */

/** A registered tracer provider: `shutdown` flushes what is buffered and unregisters it. */
export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * Whether the environment asks for traces: the standard `OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, unless `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`.
 */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return false;
  if (env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase() === 'none') return false;
  return Boolean(
    env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim() || env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim(),
  );
}

/**
 * Registers a tracer provider that batches spans to the configured OTLP/HTTP endpoint (JSON, at
 * `<endpoint>/v1/traces`; the exporter reads the endpoint, headers and timeout from the standard
 * variables), with `service.name` from `OTEL_SERVICE_NAME` (default `mesh`) and `service.version`
 * Mesh's version. Undefined, and nothing imported or registered, when tracing is not configured.
 */
export async function startTelemetry(
  version: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Telemetry | undefined> {
  if (!tracingConfigured(env)) return undefined;
  const [
    { BasicTracerProvider, BatchSpanProcessor },
    { resourceFromAttributes },
    { OTLPTraceExporter },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': env['OTEL_SERVICE_NAME']?.trim() || 'mesh',
      'service.version': version,
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  const unregister = registerTracing(provider);
  return {
    async shutdown() {
      try {
        await provider.shutdown();
      } finally {
        unregister();
      }
    },
  };
}

/**
 * Makes `provider` the global tracer provider, with a context manager that carries the active
 * span across `await` (so model requests and tool calls nest under their turn). Returns the way
 * back to the API's no-op defaults. Tests register an in-memory provider through it.
 */
export function registerTracing(provider: TracerProvider): () => void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  setTracingEnabled(true);
  return () => {
    setTracingEnabled(false);
    trace.disable();
    context.disable();
  };
}
