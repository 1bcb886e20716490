import { operations } from '../app/operations/catalog.ts';
import { operationId } from './api/operations.ts';
import type { JsonSchema } from '../model/json.ts';
import type { ApiRoute } from './router.ts';

/*
 * The route tables of docs/api.md, written from the routes the server serves (the catalog's
 * operations, its streams and its document), so the page cannot drift from the API: `npm run
 * docs:api` writes them between the markers below, and a test fails when what is there is not
 * what would be written.
 */

export const ROUTES_BEGIN =
  '<!-- routes: generated from the catalog by `npm run docs:api`; edit the operations, not this table -->';
export const ROUTES_END = '<!-- routes: end -->';

/** Text safe in a table cell: pipes escaped, lines joined. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/** `{name, provider?, …}`: a body's fields, the optional ones marked. */
function bodyFields(schema: JsonSchema | undefined): string {
  const properties = schema?.['properties'];
  if (typeof properties !== 'object' || properties === null) return '';
  const names = Object.keys(properties);
  if (names.length === 0) return '';
  const required = Array.isArray(schema?.['required']) ? (schema['required'] as unknown[]) : [];
  return `\`{${names.map((n) => (required.includes(n) ? n : `${n}?`)).join(', ')}}\``;
}

/** The catalog's operations by the id their routes carry. */
const byRouteId = new Map(operations.map((op) => [operationId(op.name), op]));

/** One route's row: what it does, what it reads, how it answers, and its CLI command. */
function row(route: ApiRoute<unknown>): string {
  const parts: string[] = [route.summary.replace(/\.$/, '')];
  const body = bodyFields(route.body);
  if (body !== '') parts.push(`body ${body}`);
  const query = Object.keys(route.query ?? {});
  if (query.length > 0) parts.push(`query \`?${query.map((q) => `${q}=`).join('&')}\``);
  if (route.status !== undefined && route.status !== 200) parts.push(`answers \`${route.status}\``);
  if (route.mediaType !== undefined) parts.push(`as \`${route.mediaType}\``);
  let text = `${parts.join('; ')}.`;
  if (route.description) text += ` ${route.description}`;
  const op = byRouteId.get(route.operationId);
  const errors = op?.errors.filter((e) => e !== 'invalid_input') ?? [];
  if (errors.length > 0) text += ` Refusals: ${errors.map((e) => `\`${e}\``).join(', ')}.`;
  const cli = op && 'command' in op.cli ? `\`mesh ${op.cli.command.join(' ')}\`` : '';
  return `| ${route.method} | \`${route.path}\` | ${cell(text)} | ${cli} |`;
}

/** The route tables: one per tag, in the order the API lists its routes. */
export function routeTables(routes: readonly ApiRoute<unknown>[]): string {
  const tags: string[] = [];
  for (const route of routes) if (!tags.includes(route.tag)) tags.push(route.tag);
  const sections = tags.map((tag) =>
    [
      `### ${tag}`,
      '',
      '| method | path | what it does | CLI |',
      '| --- | --- | --- | --- |',
      ...routes.filter((r) => r.tag === tag).map(row),
    ].join('\n'),
  );
  return [ROUTES_BEGIN, '', sections.join('\n\n'), '', ROUTES_END].join('\n');
}

/**
 * A page's text with its tables' padding taken out, so a page a formatter aligned (Prettier pads
 * cells and stretches the dashes) reads the same as the tables as written.
 */
export function unpadded(page: string): string {
  return page
    .split('\n')
    .map((line) =>
      line.startsWith('|')
        ? line
            .split(/(?<!\\)\|/)
            .map((c) => c.trim().replace(/^:?-{3,}:?$/, '---'))
            .join('|')
        : line,
    )
    .join('\n');
}

/** `page` with its generated route tables replaced by `tables`; undefined without the markers. */
export function withRouteTables(page: string, tables: string): string | undefined {
  const begin = page.indexOf(ROUTES_BEGIN);
  const end = page.indexOf(ROUTES_END);
  if (begin === -1 || end === -1 || end < begin) return undefined;
  return page.slice(0, begin) + tables + page.slice(end + ROUTES_END.length);
}
