import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { refused } from '../../src/tool/package-support.ts';
import { connect, type Datadog } from './datadog-client.ts';
import { datadogSettings, type DatadogSettings } from './settings.ts';

/** Settings and a client for one call, or the observation that says why not. */
export async function openCall(
  ctx: ToolContext,
  tool: string,
): Promise<
  { ok: true; settings: DatadogSettings; client: Datadog } | { ok: false; out: ToolOutput }
> {
  const outcome = datadogSettings(ctx.config);
  if (!outcome.ok) return { ok: false, out: refused(`${tool} cannot run: ${outcome.problem}.`) };
  return { ok: true, settings: outcome.settings, client: await connect(ctx, outcome.settings) };
}
