import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** How the synthetic schemas vary between packages. */
export type SchemaVariety =
  /** Every package words its schemas for its own vendor: 2,500 distinct documents. */
  | 'distinct'
  /** Every package uses the same five schema documents (a shared connector template). */
  | 'shared';

const TOOL_KINDS = ['search', 'get', 'create', 'update', 'delete'] as const;
type ToolKind = (typeof TOOL_KINDS)[number];

function schemaFor(kind: ToolKind, vendor: string): Record<string, unknown> {
  const key = {
    type: 'string',
    pattern: '^[A-Z]+-[0-9]+$',
    description: `The ${vendor} record key.`,
  };
  switch (kind) {
    case 'search':
      return {
        type: 'object',
        required: ['query'],
        additionalProperties: false,
        properties: {
          query: { type: 'string', minLength: 1, description: `Words to find in ${vendor}.` },
          state: { enum: ['open', 'closed', 'all'] },
          limit: { type: 'integer', minimum: 1, maximum: 100 },
          cursor: { type: 'string' },
        },
      };
    case 'get':
      return {
        type: 'object',
        required: ['key'],
        additionalProperties: false,
        properties: { key },
      };
    case 'create':
      return {
        type: 'object',
        required: ['title'],
        additionalProperties: false,
        properties: {
          title: { type: 'string', minLength: 1, maxLength: 256 },
          body: { type: 'string', description: `Markdown body of the ${vendor} record.` },
          labels: { type: 'array', items: { type: 'string' }, maxItems: 20 },
          assignee: { type: ['string', 'null'] },
          due: { type: 'string', format: 'date' },
        },
      };
    case 'update':
      return {
        type: 'object',
        required: ['key'],
        additionalProperties: false,
        properties: {
          key,
          title: { type: 'string', minLength: 1 },
          state: { enum: ['open', 'closed'] },
          priority: { type: 'integer', minimum: 0, maximum: 4 },
        },
      };
    case 'delete':
      return {
        type: 'object',
        required: ['key'],
        additionalProperties: false,
        properties: { key, reason: { type: 'string' } },
      };
    default: {
      const never: never = kind;
      throw new Error(`unknown kind ${String(never)}`);
    }
  }
}

/** A TOML inline table for a JSON value (the synthetic schemas hold no dates or odd numbers). */
function inlineToml(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inlineToml).join(', ')}]`;
  if (value === null) throw new Error('TOML has no null; keep it inside JSON files');
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{ ${entries.map(([k, v]) => `${/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k)} = ${inlineToml(v)}`).join(', ')} }`;
  }
  return JSON.stringify(value);
}

/** The folder name and manifest of synthetic package number `i`. */
function manifestFor(
  i: number,
  variety: SchemaVariety,
): { manifest: string; files: Record<string, string> } {
  const vendor = variety === 'distinct' ? `Vendor${i}` : 'the service';
  const kind = `vendor${i}_api_token`;
  const files: Record<string, string> = {};
  const tools = TOOL_KINDS.map((toolKind, t) => {
    const schema = schemaFor(toolKind, vendor);
    // get / create / delete live in files; search / update are inline, as authors mix both.
    const inFile = toolKind === 'get' || toolKind === 'create' || toolKind === 'delete';
    let parameters: string;
    if (inFile) {
      const path = `schemas/${toolKind}.json`;
      files[path] = `${JSON.stringify(schema, null, 2)}\n`;
      parameters = `parameters = "${path}"`;
    } else {
      parameters = `parameters = ${inlineToml(schema)}`;
    }
    const effect = toolKind === 'create' || toolKind === 'update' || toolKind === 'delete';
    return [
      '[[tools]]',
      `name = "vendor${i}_${toolKind}"`,
      `description = "${toolKind} records in ${vendor}."`,
      parameters,
      `class = "${effect ? 'effect' : 'query'}"`,
      `replay = "${effect ? 'effectful' : 'replayable'}"`,
      `needs = ["secret:${kind}"]`,
      `handler = "${toolKind}${t}"`,
      ...(toolKind === 'create'
        ? [
            'output_schema = { type = "object", required = ["key"], properties = { key = { type = "string" }, url = { type = "string", format = "uri" } } }',
          ]
        : []),
      '',
    ].join('\n');
  });
  const manifest = [
    '# A synthetic package for bench:crawl.',
    'manifest_version = 1',
    '',
    '[package]',
    `id = "bench.vendor${i}"`,
    `version = "1.${i % 7}.0"`,
    'mesh_api = "^1.0"',
    'hook_protocol = 1',
    `description = "Reads and writes records in ${vendor} as the agent's own account."`,
    '',
    '[[config]]',
    'key = "api_token"',
    'disposition = "secret"',
    'type = "string"',
    `kind = "${kind}"`,
    `description = "The agent's own ${vendor} API token."`,
    '',
    '[[config]]',
    'key = "default_project"',
    'disposition = "public"',
    'type = "string"',
    'default = "MESH"',
    'description = "Where new records go unless the agent names another project."',
    '',
    '[[config]]',
    'key = "page_size"',
    'disposition = "config"',
    'type = "integer"',
    'default = 25',
    'description = "How many records one search returns."',
    '',
    ...tools,
    '[hooks]',
    'on_enable = "enable"',
    'health_check = "health"',
    '',
  ].join('\n');
  return { manifest, files };
}

/** The handler names synthetic package `i` declares (what its handlers.ts would export). */
export function syntheticHandlers(): string[] {
  return TOOL_KINDS.map((kind, t) => `${kind}${t}`);
}

/** Writes `count` synthetic packages under `dir` (one folder each) and returns their folders. */
export function writeSyntheticPackages(
  dir: string,
  count: number,
  variety: SchemaVariety,
): string[] {
  const folders: string[] = [];
  for (let i = 0; i < count; i++) {
    const folder = `vendor${String(i).padStart(3, '0')}`;
    const { manifest, files } = manifestFor(i, variety);
    mkdirSync(join(dir, folder, 'schemas'), { recursive: true });
    writeFileSync(join(dir, folder, 'manifest.toml'), manifest);
    for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, folder, path), text);
    folders.push(folder);
  }
  return folders;
}
