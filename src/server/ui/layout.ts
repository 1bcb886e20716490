import type { AgentRecord } from '../../app/records.ts';
import { html, type Html } from './html.ts';

/** What every signed-in page knows: the session's CSRF token and a one-shot notice. */
export interface PageSession {
  readonly csrf: string;
  readonly flash?:
    | {
        readonly kind: 'ok' | 'error';
        readonly text: string;
        /** What a refused form held, to show again; and the field the refusal names. */
        readonly kept?: Readonly<Record<string, string>>;
        readonly field?: string;
      }
    | undefined;
}

/**
 * A form field's value as the page shows it: what was typed before a refusal brought the person
 * back here, else `current`.
 */
export function sticky(session: PageSession, name: string, current: string): string {
  return session.flash?.kind === 'error' ? (session.flash.kept?.[name] ?? current) : current;
}

/**
 * A filter of a listing page (a GET form): a select of `options`, each a value or a value and
 * its label, `chosen` marked.
 */
export function filterSelect(
  name: string,
  label: string,
  chosen: string | undefined,
  options: readonly (string | readonly [value: string, label: string])[],
): Html {
  return html`<label
    >${label}
    <select name="${name}">
      ${options.map((o) => {
        const [value, shown] = typeof o === 'string' ? [o, o] : o;
        return html`<option value="${value}" ${value === (chosen ?? '') ? html` selected` : ''}>
          ${shown}
        </option>`;
      })}
    </select></label
  >`;
}

/**
 * A pick list for a name that must exist (an agent, a backend, a provider): the names there are,
 * none chosen until the person picks one (or what they picked before a refusal).
 */
export function picker(
  session: PageSession,
  name: string,
  label: string,
  options: readonly string[],
): Html {
  const chosen = sticky(session, name, '');
  return html`<label
    >${label}
    <select name="${name}" required>
      <option value="">
        ${options.length === 0 ? `no ${label.toLowerCase()} yet` : 'choose…'}
      </option>
      ${options.map(
        (o) => html`<option value="${o}" ${o === chosen ? html` selected` : ''}>${o}</option>`,
      )}</select
    >${fieldError(session, name, label)}</label
  >`;
}

/** The refusal's message beside the field it names, in the form's own words (its `label`). */
export function fieldError(session: PageSession, name: string, label: string): Html | '' {
  const flash = session.flash;
  if (flash?.kind !== 'error' || flash.field !== name) return '';
  const said = flash.text.replace(/^(field|the input's field) `[^`]*` /, '');
  return html`<span class="field-error" role="alert">${label}: ${said}</span>`;
}

/** A time as the pages show it: UTC, to the second, machine-readable in `datetime`. */
export function time(d: Date | null | undefined): Html {
  if (!d) return html`<span class="muted">—</span>`;
  const iso = d.toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 19)}</time>`;
}

/** The hidden field every form post carries: the session's CSRF token. */
export function csrfField(session: PageSession): Html {
  return html`<input type="hidden" name="csrf" value="${session.csrf}" />`;
}

/**
 * The frame of every page. A `live` page also loads the script that follows its runs' event
 * streams; without it (or without JavaScript) the page is the same, only not updated.
 */
export function layout(
  title: string,
  session: PageSession | undefined,
  main: Html,
  live = false,
): string {
  const nav = session
    ? html`<nav>
        <a href="/agents">Agents</a>
        <a href="/runs">Runs</a>
        <a href="/outbound">Outbound</a>
        <a href="/usage">Usage</a>
        <a href="/providers">Model providers</a>
        <a href="/mcp">MCP servers</a>
        <a href="/packages">Packages</a>
        <a href="/workspaces">Workspaces</a>
        <a href="/browsers">Browsers</a>
        <a href="/web">Web</a>
        <a href="/reference">API</a>
        <form method="post" action="/logout" class="inline">
          ${csrfField(session)}<button class="link">Log out</button>
        </form>
      </nav>`
    : html``;
  const flash = session?.flash
    ? html`<p class="flash ${session.flash.kind}" role="status">${session.flash.text}</p>`
    : html``;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Mesh</title>
        <link rel="stylesheet" href="/assets/mesh.css" />
        ${live ? html`<script src="/assets/live.js" defer></script>` : ''}
      </head>
      <body>
        <header><a class="brand" href="/">Mesh</a>${nav}</header>
        <main>${flash}${main}</main>
      </body>
    </html>`.text;
}

/** The tabs of an agent's pages. */
export type AgentTab = 'tools' | 'mcp' | 'chat' | 'runs' | 'memories' | 'settings';

/** An agent's name and its tabs, the current one marked. */
export function agentHeader(agent: AgentRecord, tab: AgentTab): Html {
  const base = `/agents/${encodeURIComponent(agent.name)}`;
  const link = (t: AgentTab, label: string) =>
    html`<a
      href="${base}/${t}"
      class="${t === tab ? 'tab active' : 'tab'}"
      ${t === tab ? html` aria-current="page"` : ''}
      >${label}</a
    >`;
  return html`<h1>${agent.name}</h1>
    <div class="tabs">
      ${link('tools', 'Tools')}${link('mcp', 'MCP')}${link('chat', 'Chat')}${link('runs', 'Runs')}${link('memories', 'Memories')}${link('settings', 'Settings')}
    </div>`;
}

/** A list of records as a table, or a line saying there are none. */
export function listTable<T>(
  rows: readonly T[],
  empty: string,
  headings: readonly string[],
  row: (r: T) => Html,
): Html {
  return rows.length === 0
    ? html`<p class="muted">${empty}</p>`
    : html`<table class="list">
        <thead>
          <tr>
            ${headings.map((h) => html`<th>${h}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${rows.map(row)}
        </tbody>
      </table>`;
}
