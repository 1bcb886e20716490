import type { JsonObject, JsonValue } from '../model/json.ts';
import type { Redactor } from '../tool/redaction.ts';
import {
  ARTIFACT_KINDS,
  artifactId,
  observation as makeObservation,
  type ArtifactLink,
  type Observation,
} from '../tool/observation.ts';

// An observation as a run step stores it (JSON), and back.

/** `o` with held secrets removed from its text and data. */
export function redactedObservation(redactor: Redactor, o: Observation): Observation {
  const text = redactor.text(o.text);
  const data = o.data === undefined ? undefined : redactor.json(o.data);
  if (text === o.text && data === o.data) return o;
  return makeObservation({
    kind: o.kind,
    text,
    ...(data === undefined ? {} : { data }),
    ...(o.truncated ? { truncated: o.truncated } : {}),
    ...(o.artifacts ? { artifacts: o.artifacts } : {}),
  });
}

/** The JSON form of an observation as stored in a step. */
export function observationJson(o: Observation): JsonObject {
  const out: Record<string, JsonValue> = { kind: o.kind, text: o.text };
  if (o.data !== undefined) out['data'] = o.data;
  if (o.truncated) out['truncated'] = { ...o.truncated };
  if (o.artifacts) out['artifacts'] = o.artifacts.map((link) => ({ ...link }));
  return out;
}

/** The artifact links of a stored observation (malformed entries are skipped). */
export function artifactLinksFrom(json: JsonObject): ArtifactLink[] {
  const raw = json['artifacts'];
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((entry: JsonValue) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return [];
    const { artifactId: id, kind, mediaType, sizeBytes, uri } = entry as JsonObject;
    if (typeof id !== 'string' || id === '' || typeof mediaType !== 'string') return [];
    if (!ARTIFACT_KINDS.some((k) => k === kind) || typeof sizeBytes !== 'number') return [];
    return [
      {
        artifactId: artifactId(id),
        kind: kind as ArtifactLink['kind'],
        mediaType,
        sizeBytes,
        ...(typeof uri === 'string' ? { uri } : {}),
      },
    ];
  });
}

/** Rebuilds an observation from a stored step (re-validating the truncation rule). */
export function observationFrom(json: JsonObject): Observation {
  const truncated = json['truncated'] as
    { artifactId: string; totalBytes: number; shownBytes: number } | undefined;
  return makeObservation({
    kind: json['kind'] as Observation['kind'],
    text: typeof json['text'] === 'string' ? json['text'] : '',
    ...(json['data'] === undefined ? {} : { data: json['data'] }),
    ...(truncated
      ? { truncated: { ...truncated, artifactId: artifactId(truncated.artifactId) } }
      : {}),
    ...(json['artifacts'] === undefined ? {} : { artifacts: artifactLinksFrom(json) }),
  });
}
