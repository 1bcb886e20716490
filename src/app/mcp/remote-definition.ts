import { EgressRefusedError } from '../../egress/guarded-fetch.ts';
import { unansweredWithin } from '../../mcp/connect-failure.ts';
import { McpProtocolError, transportFailure } from '../../mcp/session.ts';
import type { JsonSchema } from '../../model/json.ts';
import { isLegacyQuery, remoteToolName } from '../../policy/remote-offer.ts';
import type { McpToolRecord, ToolProviderRecord } from '../../store/mcp.ts';
import { prepareDecoder } from '../../tool/decode-arguments.ts';
import type { JsonObject } from '../../model/json.ts';
import type { ToolContext } from '../../tool/context.ts';
import type { Definition, ToolHandler, ToolOutput } from '../../tool/definition.ts';
import {
  DeliveryError,
  deliveryOutput,
  OUTBOX,
  OUTBOX_NEED,
  type DeclaredEffect,
} from '../../tool/outbound.ts';
import { hasCode, ToolUnavailableError } from '../../tool/errors.ts';
import { createRegistry } from '../../tool/registry.ts';
import { toOutput } from './content.ts';
import { bindingKey, withSession } from './credentials.ts';
import type { Mesh } from '../mesh.ts';
import type { CheckedDefinition } from './runtime.ts';

/** A catalog row as a definition the executor runs: the call goes to the server as the agent. */

/** A definition the registry can hold for one catalog row, calling the server as the agent. */
function definitionFor(mesh: Mesh, provider: ToolProviderRecord, tool: McpToolRecord): Definition {
  const query = isLegacyQuery(tool);
  const remote = tool.definition;
  const inputSchema = (remote['inputSchema'] as JsonSchema | undefined) ?? { type: 'object' };
  const outputSchema = remote['outputSchema'] as JsonSchema | undefined;
  const checker = outputSchema ? outputChecker(outputSchema) : undefined;
  // The binding's pooled session; a call is sent again only when it provably never reached the
  // server (the session had ended, or no connection could be made): an effect must not repeat.
  const call = (ctx: ToolContext, args: JsonObject) =>
    withSession(
      mesh,
      ctx.agentId,
      provider,
      (session) => session.callTool(tool.toolName, args, ctx.signal),
      'not_sent',
    );
  const queryCall: ToolHandler = async (ctx, args) => {
    try {
      return toOutput(await call(ctx, args), checker);
    } catch (error) {
      if (hasCode(error, McpProtocolError.code))
        return { text: `${provider.slug} refused the call: ${error.message}`, isError: true };
      if (hasCode(error, EgressRefusedError.code)) throw error;
      throw queryUnavailable(provider, error);
    }
  };
  // A call with effect semantics is an outbound event: recorded before it is sent (with its
  // stamp, as it is known from the arguments), its delivery state kept, and a call whose answer
  // was lost reported unknown, never sent again: MCP has no way to ask what a call did.
  const declaredEffect = (args: JsonObject): DeclaredEffect => ({
    name: 'call',
    kind: `mcp.${provider.slug}`,
    target: `${provider.slug} tool ${tool.toolName}`,
    payload: args,
    reconciles: false,
  });
  const effectCall: ToolHandler = async (ctx, args) => {
    let output: ToolOutput | undefined;
    const what = `the call to ${provider.slug}'s ${tool.toolName}`;
    const { reconciles: _never, ...effect } = declaredEffect(args);
    const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
      ...effect,
      async send(key) {
        try {
          output = toOutput(await call(ctx, args), checker);
        } catch (error) {
          throw deliveryFailure(provider, error);
        }
        return {
          externalId: key.uuid,
          data: { text: output.text.slice(0, 2000), is_error: output.isError === true },
        };
      },
    });
    if (delivery.state === 'delivered' && output !== undefined) return output;
    return deliveryOutput(what, delivery, (receipt) => ({
      text:
        typeof receipt.data?.['text'] === 'string' ? receipt.data['text'] : `${what} was delivered`,
    }));
  };
  const execute = query ? queryCall : effectCall;
  const offered = { slug: provider.slug, providerId: provider.id, tool: tool.toolName };
  const description =
    typeof remote['description'] === 'string'
      ? remote['description']
      : typeof remote['title'] === 'string'
        ? remote['title']
        : '';
  const definition: Definition = {
    tool: {
      name: remoteToolName(provider.slug, tool.toolName),
      description,
      parameters: inputSchema,
    },
    class: query ? 'query' : 'effect',
    replay: query ? 'replayable' : 'effectful',
    needs: query ? [] : [OUTBOX_NEED],
    ...(query ? {} : { declaredEffect }),
    ...(outputSchema ? { outputSchema } : {}),
    origin: {
      source: 'remote',
      packageId: `mcp.${provider.slug}`,
      version: '0',
      digest: tool.fingerprint,
    },
    execute,
  };
  return {
    ...definition,
    recheck: (agentId) => {
      const why = changedSinceOffered(mesh, agentId, offered, tool.fingerprint);
      if (why === undefined) return undefined;
      // Called as an effect (stamped first, through the outbox), whatever it was offered as; the
      // observation says why, and the record pins the fingerprint the server listed last.
      return {
        why: why.text,
        definition: {
          ...definition,
          class: 'effect',
          replay: 'effectful',
          needs: [OUTBOX_NEED],
          declaredEffect,
          origin: { ...definition.origin, digest: why.latest ?? tool.fingerprint },
          execute: async (ctx, args) => {
            const output = await effectCall(ctx, args);
            return { ...output, text: `${why.text}\n${output.text}` };
          },
        },
      };
    },
  };
}

/** Why a query call failed without an answer: nothing was sent, or it may have reached the server. */
function queryUnavailable(provider: ToolProviderRecord, error: unknown): ToolUnavailableError {
  const failed = transportFailure(error);
  return new ToolUnavailableError(
    failed?.timedOut
      ? hungServer(provider)
      : failed?.delivery === 'not_sent'
        ? `${provider.slug} could not be reached`
        : `${provider.slug} did not answer`,
  );
}

/** An effect call's failure as the outbox records it: refused, retryable, or ambiguous. */
function deliveryFailure(provider: ToolProviderRecord, error: unknown): DeliveryError {
  if (hasCode(error, McpProtocolError.code))
    return new DeliveryError('terminal', `${provider.slug} refused the call: ${error.message}`);
  if (hasCode(error, EgressRefusedError.code)) return new DeliveryError('terminal', error.message);
  const failed = transportFailure(error);
  // A server that took the session's opening and then said nothing is hung: the call was not
  // sent, and another attempt would wait as long again.
  if (failed?.timedOut && failed.delivery === 'not_sent')
    return new DeliveryError('terminal', `${hungServer(provider)}; the call was not sent`);
  if (failed?.delivery === 'not_sent')
    return new DeliveryError('retryable', `${provider.slug} could not be reached`);
  // The request may have reached the server, and MCP has no way to ask what it did.
  const why = error instanceof Error ? error.message : 'no answer';
  return new DeliveryError('ambiguous', `${provider.slug}: ${why}`, { cause: error });
}

/**
 * Whether a remote tool's definition changed since it was offered, as this process knows now: the
 * server listed it with another fingerprint, or said its list changed and has not been listed
 * again since. In memory, per call: no round trip to the server or the database.
 */
function changedSinceOffered(
  mesh: Mesh,
  agentId: string,
  offered: { readonly slug: string; readonly providerId: string; readonly tool: string },
  fingerprint: string,
): { text: string; latest?: string } | undefined {
  const key = bindingKey(agentId, offered.providerId);
  const latest = mesh.mcp.listed.get(key)?.get(offered.tool);
  if (latest !== undefined && latest !== fingerprint)
    return {
      latest,
      text: `[${offered.slug} changed its definition of ${offered.tool} since it was offered (${fingerprint.slice(0, 12)} → ${latest.slice(0, 12)}): it was called as an effect, and the change awaits review (mesh mcp review).]`,
    };
  if ((mesh.mcp.notices.get(key) ?? 0) > (mesh.mcp.confirmed.get(key) ?? 0))
    return {
      text: `[${offered.slug} said its tool list changed after ${offered.tool} was offered, and has not been listed again: it was called as an effect.]`,
    };
  return undefined;
}

/** What a hung server is called: it accepted the request and said nothing within its timeout. */
function hungServer(provider: ToolProviderRecord): string {
  return `${provider.slug} ${unansweredWithin(provider.requestTimeoutMs)}`;
}

/**
 * A check of structured results against a remote output schema (the executor's own decoder, so
 * the two never disagree). A mismatch is the server's fault: the call is reported, not fatal.
 */
function outputChecker(schema: JsonSchema): (data: unknown) => string | undefined {
  return (data) => {
    try {
      const errors = prepareDecoder(schema, 'lenient').compiled.validate(data);
      const first = errors[0];
      return first ? `at ${first.instancePath || '/'}` : undefined;
    } catch {
      return 'the output schema itself is not valid';
    }
  };
}

/**
 * Checked definitions by (provider, tool, fingerprint, semantics), per Mesh (McpRuntime): an
 * unchanged remote tool is compiled once, not at every turn (the decoders are cached by schema
 * object).
 */
const MAX_CHECKED = 5000;

export function checkedDefinition(
  mesh: Mesh,
  provider: ToolProviderRecord,
  tool: McpToolRecord,
): CheckedDefinition {
  const cache = mesh.mcp.definitions;
  // The provider's settings are in the key: a definition carries them to its calls, so a changed
  // request timeout applies to the next call, not after a restart.
  const key = `${provider.id}\n${provider.url}\n${provider.allowLoopbackHttp}\n${provider.requestTimeoutMs}\n${tool.toolName}\n${tool.fingerprint}\n${isLegacyQuery(tool) ? 'query' : 'effect'}`;
  let entry = cache.get(key);
  if (!entry) {
    const definition = definitionFor(mesh, provider, tool);
    try {
      createRegistry([definition]);
      entry = { definition };
    } catch (error) {
      entry = {
        refused:
          error instanceof Error ? (error.message.split('\n')[0] ?? '').slice(0, 200) : 'invalid',
      };
    }
    if (cache.size >= MAX_CHECKED) cache.clear();
    cache.set(key, entry);
  }
  return entry;
}
