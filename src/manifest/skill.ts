import { parseDocument } from 'yaml';
import type { DiagnosticSink } from './diagnostic.ts';
import type { Skill } from './package-manifest.ts';
import { utf8Bytes } from './toml-document.ts';
import { PACKAGE_LIMITS } from './versioning.ts';

/** AgentSkills: lowercase words joined by single hyphens, at most 64 characters. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;
/** Front-matter fields of the AgentSkills shape that Mesh reads; anything else is refused. */
const KNOWN_FIELDS = new Set(['name', 'description', 'license', 'metadata']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses a SKILL.md in the AgentSkills shape: YAML front matter between `---` lines holding
 * `name` and `description` (optionally `license` and a string-to-string `metadata` map), then a
 * markdown body. Refusals go to the sink (field paths are `front_matter.<key>`); YAML error
 * messages are cut to their first line so they do not echo the file.
 */
export function parseSkill(text: string, sink: DiagnosticSink): Skill | undefined {
  const bytes = utf8Bytes(text);
  if (bytes > PACKAGE_LIMITS.maxSkillBytes) {
    sink.add(
      'skill_too_large',
      '',
      `SKILL.md is ${bytes} bytes; the limit is ${PACKAGE_LIMITS.maxSkillBytes}`,
    );
    return undefined;
  }
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const match = /^---\n([\s\S]*?)\n---[ \t]*(?:\n|$)/.exec(normalized);
  if (!match) {
    sink.add(
      'skill_invalid',
      'front_matter',
      'SKILL.md must start with YAML front matter between --- lines',
    );
    return undefined;
  }
  const yaml = match[1] ?? '';
  const document = parseDocument(yaml, { uniqueKeys: true, prettyErrors: false });
  if (document.errors.length > 0) {
    for (const error of document.errors) {
      // The front matter starts on the file's second line, after the opening ---.
      const line = 2 + (yaml.slice(0, error.pos[0]).match(/\n/g)?.length ?? 0);
      const reason = error.message.split('\n')[0] ?? '';
      sink.add('skill_invalid', 'front_matter', `malformed YAML: ${reason}`, { line });
    }
    return undefined;
  }
  const data: unknown = document.toJS();
  if (!isRecord(data)) {
    sink.add('skill_invalid', 'front_matter', 'front matter must be a YAML mapping');
    return undefined;
  }
  const before = sink.size;
  const name = data['name'];
  if (typeof name !== 'string' || name.length > MAX_NAME || !SKILL_NAME_PATTERN.test(name)) {
    sink.add(
      'skill_invalid',
      'front_matter.name',
      `is required: lowercase words joined by hyphens, at most ${MAX_NAME} characters`,
    );
  }
  const description = data['description'];
  if (
    typeof description !== 'string' ||
    description.trim() === '' ||
    description.length > MAX_DESCRIPTION
  ) {
    sink.add(
      'skill_invalid',
      'front_matter.description',
      `is required: a non-empty string of at most ${MAX_DESCRIPTION} characters`,
    );
  }
  if (data['license'] !== undefined && typeof data['license'] !== 'string') {
    sink.add('skill_invalid', 'front_matter.license', 'must be a string');
  }
  const metadata = data['metadata'];
  if (
    metadata !== undefined &&
    (!isRecord(metadata) || Object.values(metadata).some((v) => typeof v !== 'string'))
  ) {
    sink.add('skill_invalid', 'front_matter.metadata', 'must map strings to strings');
  }
  for (const key of Object.keys(data)) {
    if (!KNOWN_FIELDS.has(key)) {
      sink.add(
        'skill_invalid',
        `front_matter.${key}`,
        `is not a field Mesh reads (${[...KNOWN_FIELDS].join(', ')})`,
      );
    }
  }
  const body = normalized.slice(match[0].length).trim();
  if (body === '')
    sink.add('skill_invalid', 'body', 'the skill has no body after its front matter');
  if (sink.size > before) return undefined;
  return Object.freeze({ name: name as string, description: (description as string).trim(), body });
}
