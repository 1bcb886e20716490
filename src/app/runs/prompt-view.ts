import { isJsonObject, type JsonObject, type JsonValue } from '../../model/json.ts';
import { promptRefOf } from '../../run/prompt-snapshot.ts';
import type { StepRecord } from '../../run/records.ts';
import { promptParts } from '../../store/runs.ts';
import { MeshError } from '../../tool/errors.ts';
import type { Mesh } from '../mesh.ts';

/** What a run's model request N was sent, exactly, as the faces show it. */
export interface PromptAnswer {
  /** 1 for the run's first model request. */
  readonly request: number;
  /** The request's step. */
  readonly seq: number;
  readonly round: number | null;
  /** The model and the parameters the request carried. */
  readonly params: JsonObject;
  /** The messages as sent (after redaction), in order. */
  readonly messages: readonly JsonValue[];
  /** The tool definitions offered, as sent. */
  readonly tools: readonly JsonValue[];
  /** Parts the record names that the store no longer holds (none, unless rows were removed). */
  readonly missing: number;
}

/**
 * The prompt snapshot of a run's request `n` (1-based), from the parts its step names. A request
 * out of range, or one written before snapshots were kept, is refused naming which.
 */
export async function promptOf(
  mesh: Mesh,
  runId: string,
  steps: readonly StepRecord[],
  n: number,
): Promise<PromptAnswer> {
  const requests = steps.filter((s) => s.kind === 'model_request');
  const step = requests[n - 1];
  if (!step)
    throw new MeshError(
      'request_not_found',
      `run ${runId} has ${requests.length} model request(s); there is no request ${n}`,
      { field: 'input.request' },
    );
  const ref = promptRefOf(step.data);
  if (!ref)
    throw new MeshError(
      'request_not_found',
      `request ${n} of run ${runId} was written before Mesh kept prompt snapshots`,
      { field: 'input.request' },
    );
  const parts = await promptParts(mesh.db, [...ref.messages, ref.tools]);
  const messages = ref.messages.flatMap((h) => (parts.has(h) ? [parts.get(h) as JsonValue] : []));
  const tools = parts.get(ref.tools);
  const round = step.data['round'];
  return {
    request: n,
    seq: step.seq,
    round: typeof round === 'number' ? round : null,
    params: ref.params,
    messages,
    tools: Array.isArray(tools) ? tools : [],
    missing: ref.messages.length - messages.length + (tools === undefined ? 1 : 0),
  };
}

/** The snapshot as text: each message with its role, then the tools by name. */
export function promptLines(runId: string, p: PromptAnswer): string[] {
  const text = (m: JsonValue): string => {
    if (!isJsonObject(m)) return JSON.stringify(m);
    const o = m;
    const calls = Array.isArray(o['toolCalls']) ? o['toolCalls'] : [];
    const images = Array.isArray(o['images']) ? o['images'].length : 0;
    return [
      typeof o['content'] === 'string' ? o['content'] : '',
      ...calls.map((c) => `→ call ${JSON.stringify(c)}`),
      ...(images > 0 ? [`(${images} image(s))`] : []),
    ]
      .filter((l) => l !== '')
      .join('\n');
  };
  const field = (v: JsonValue, key: string): string => {
    const value = isJsonObject(v) ? v[key] : undefined;
    return typeof value === 'string' ? value : '?';
  };
  const role = (m: JsonValue) => field(m, 'role');
  const name = (t: JsonValue) => field(t, 'name');
  return [
    `run ${runId} request ${p.request} (step ${p.seq}${p.round === null ? '' : `, round ${p.round}`}): ${JSON.stringify(p.params)}`,
    ...p.messages.flatMap((m, i) => [
      `--- ${i + 1}. ${role(m)}`,
      ...text(m)
        .split('\n')
        .map((l) => `  ${l}`),
    ]),
    `--- tools (${p.tools.length}): ${p.tools.map(name).join(', ') || 'none'}`,
    ...(p.missing > 0 ? [`(${p.missing} part(s) of this snapshot are no longer stored)`] : []),
  ];
}
