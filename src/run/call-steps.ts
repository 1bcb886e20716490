import type { ToolCall } from '../model/wire.ts';
import type { Definition } from '../tool/definition.ts';
import type { CallStatus, NewStep, PackagePin } from './records.ts';

/** What a call step records of its definition: how it runs, and the package it came from. */
export type CallDefinition = Pick<Definition, 'class' | 'replay'> &
  Partial<Pick<Definition, 'origin'>>;

/** The package pin of a definition, as a call step records it. */
export function pinOf(definition: CallDefinition | undefined): { package?: PackagePin } {
  const origin = definition?.origin;
  return origin
    ? { package: { id: origin.packageId, version: origin.version, digest: origin.digest } }
    : {};
}

/** A tool call step as written: the call, how it runs, and the exact package it came from. */
export function callStep(
  call: ToolCall,
  definition: CallDefinition,
  committed: boolean,
  status: 'started' | CallStatus = 'started',
): NewStep {
  return {
    kind: 'tool_call',
    status,
    toolName: call.name,
    callId: call.id,
    effect: { class: definition.class, replay: definition.replay },
    ...pinOf(definition),
    arguments: call.arguments,
    committed,
  };
}
