import type { ToolView } from '../../app/packages/packages.ts';
import { html, type Html } from './html.ts';

/** One column of a tool table after the tool itself: its heading and how a row fills it. */
export interface ToolColumn<T> {
  readonly heading: string;
  cell(row: T): Html;
  /** Attributes of the column's cells (tests and styles find cells by them). */
  readonly attributes?: Html;
}

/** How the rows of a tool table name their tool. */
export interface ToolRows<T> {
  name(row: T): string;
  description(row: T): string;
  /** More lines under the description (a server's hint, say). */
  note?(row: T): Html;
  /** Attributes of the row (`data-tool`, …). */
  attributes?(row: T): Html;
  readonly columns: readonly ToolColumn<T>[];
}

/**
 * The one table every list of tools is drawn with — a package's tools on the packages page and
 * an agent's Tools tab, a remote server's catalog on the MCP tab: the tool's name and
 * description first, then the columns the page asks for.
 */
export function toolTable<T>(rows: readonly T[], spec: ToolRows<T>): Html {
  return html`<table class="tools">
    <thead>
      <tr>
        <th>Tool</th>
        ${spec.columns.map((c) => html`<th>${c.heading}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (row) =>
          html`<tr${spec.attributes?.(row) ?? ''}>
            <td>
              <strong>${spec.name(row)}</strong>
              <div class="muted">${spec.description(row)}</div>
              ${spec.note?.(row) ?? ''}
            </td>
            ${spec.columns.map((c) => html`<td${c.attributes ?? ''}>${c.cell(row)}</td>`)}
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** The columns a manifest declares for every tool: class, replay and needs. */
export const MANIFEST_COLUMNS: readonly ToolColumn<ToolView>[] = [
  { heading: 'Class', cell: (t) => html`<span class="badge ${t.class}">${t.class}</span>` },
  { heading: 'Replay', cell: (t) => html`${t.replay}` },
  {
    heading: 'Needs',
    cell: (t) =>
      t.needs.length === 0 ? html`<span class="muted">none</span>` : html`${t.needs.join(', ')}`,
  },
];

/** A manifest's tools: name and description, then the manifest's columns and any more. */
export function manifestToolTable<T extends ToolView>(
  tools: readonly T[],
  more: { columns?: readonly ToolColumn<T>[]; attributes?: (t: T) => Html } = {},
): Html {
  return toolTable(tools, {
    name: (t) => t.name,
    description: (t) => t.description,
    ...(more.attributes ? { attributes: more.attributes } : {}),
    columns: [...MANIFEST_COLUMNS, ...(more.columns ?? [])],
  });
}

/** A package's heading and description, as its manifest gives them. */
export function packageHeading(p: { id: string; version: string; description: string }): Html {
  return html`<h2>${p.id} <small>${p.version}</small></h2>
    <p>${p.description}</p>`;
}
