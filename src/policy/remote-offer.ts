import { createHash } from 'node:crypto';
import type { JsonObject } from '../model/json.ts';
import type { Audience } from './audience.ts';
import type { Withheld } from './offer.ts';
import { TOOL_NAME_PATTERN } from '../tool/registry.ts';

/**
 * The remote-offer policy: which of a connection's catalog rows a turn may be shown, and why the
 * others may not. Pure: the facts are read by `app/`, the verdicts are decided here.
 */

/** Where a turn (or an operator's call) happens: what a connection's scopes are matched against. */
export interface RemoteScope {
  readonly audience?: Audience;
  readonly conversationId?: string | null;
}

/** What the policy reads of an agent's binding to a remote server. */
export interface RemoteBindingFacts {
  readonly audiences: readonly Audience[] | null;
  readonly conversationIds: readonly string[] | null;
  readonly excludedTools: readonly string[];
  readonly catalogFreshUntil: Date | null;
}

/** What the policy reads of one catalog row. */
export interface RemoteToolFacts {
  readonly toolName: string;
  readonly removedAt: Date | null;
  readonly fingerprint: string;
  readonly legacyQueryFingerprint: string | null;
  /** The server's definition as listed (`execution.taskSupport` is read from it). */
  readonly definition?: JsonObject;
}

/**
 * Why a listed definition cannot be called by Mesh at all, whatever the binding says; undefined
 * when it can. A tool whose `execution.taskSupport` is `required` accepts only task-augmented
 * calls (MCP tasks), which Mesh does not make: offering it would fail every call.
 */
export function uncallableReason(definition: JsonObject | undefined): string | undefined {
  const execution = definition?.['execution'];
  const support =
    typeof execution === 'object' && execution !== null && !Array.isArray(execution)
      ? (execution as JsonObject)['taskSupport']
      : undefined;
  return support === 'required'
    ? 'it accepts only task-augmented calls (MCP tasks), which Mesh does not make'
    : undefined;
}

/**
 * The name a remote tool is offered under: namespaced by the provider's slug (`slug__tool`). MCP
 * allows names model providers refuse (dots, slashes, more than 64 characters); such a name is
 * mapped deterministically: each character outside `[A-Za-z0-9_-]` becomes `_`, the result is cut
 * to fit, and 8 hex digits of the SHA-256 of the server's own name are appended, so two names
 * never map to one. The catalog keeps the server's name beside it: the mapping reads both ways.
 */
export function remoteToolName(slug: string, toolName: string): string {
  const plain = `${slug}__${toolName}`;
  if (TOOL_NAME_PATTERN.test(plain)) return plain;
  const tag = createHash('sha256').update(toolName, 'utf8').digest('hex').slice(0, 8);
  const room = Math.max(0, 64 - slug.length - 2 - 1 - tag.length);
  const safe = toolName.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, room);
  return `${slug}__${safe}${safe === '' ? '' : '_'}${tag}`;
}

/** Whether a catalog row runs with query semantics: only a marked, unchanged definition does. */
export function isLegacyQuery(
  tool: Pick<RemoteToolFacts, 'fingerprint' | 'legacyQueryFingerprint'>,
) {
  return tool.legacyQueryFingerprint !== null && tool.legacyQueryFingerprint === tool.fingerprint;
}

/** Whether the binding's audience and conversation scopes admit this scope (unset admits all). */
export function bindingInScope(binding: RemoteBindingFacts, scope: RemoteScope): boolean {
  const audienceOk =
    scope.audience === undefined ||
    binding.audiences === null ||
    binding.audiences.includes(scope.audience);
  const conversationOk =
    scope.conversationId === undefined ||
    scope.conversationId === null ||
    binding.conversationIds === null ||
    binding.conversationIds.includes(scope.conversationId);
  return audienceOk && conversationOk;
}

/** Whether the catalog must be read again before its tools are offered at `now`. */
export function catalogStale(binding: Pick<RemoteBindingFacts, 'catalogFreshUntil'>, now: Date) {
  return binding.catalogFreshUntil === null || binding.catalogFreshUntil <= now;
}

/**
 * The one withheld entry for a connection whose catalog could not be read, named `slug__*` for
 * all its tools. No tool is offered under that name: a tool the server names `*` maps like any
 * other name model providers refuse.
 */
export function unreadableCatalog(slug: string, cause: string): Withheld {
  return {
    name: `${slug}__*`,
    reason: `the catalog of ${slug} could not be read: ${cause.slice(0, 200)}`,
  };
}

/** A catalog row's verdict: offered under a name, withheld with a reason, or not there at all. */
export type RemoteVerdict =
  { readonly offer: string } | { readonly withhold: Withheld } | { readonly absent: true };

/**
 * One catalog row under a binding. A removed tool is absent; an excluded one, one outside the
 * binding's scope, or one whose namespaced name model providers refuse is withheld with why.
 */
export function judgeRemoteTool(
  slug: string,
  binding: RemoteBindingFacts,
  tool: RemoteToolFacts,
  inScope: boolean,
): RemoteVerdict {
  if (tool.removedAt !== null) return { absent: true };
  const name = remoteToolName(slug, tool.toolName);
  if (binding.excludedTools.includes(tool.toolName))
    return { withhold: { name, reason: `excluded on the ${slug} connection` } };
  if (!inScope)
    return {
      withhold: { name, reason: `the ${slug} connection is not scoped to this conversation` },
    };
  const uncallable = uncallableReason(tool.definition);
  if (uncallable) return { withhold: { name, reason: uncallable } };
  if (!TOOL_NAME_PATTERN.test(name))
    return {
      withhold: {
        name: name.slice(0, 80),
        reason: 'the provider slug is too long for a name model providers accept',
      },
    };
  return { offer: name };
}
