import { html, type Html } from './html.ts';
import { layout, type PageSession } from './layout.ts';

/*
 * The API reference, served by Mesh from its own OpenAPI document: every route grouped by tag,
 * with its parameters, its body's fields and its answers. Rendered on the server from the same
 * document `GET /api/openapi.json` answers, so it cannot drift from the API; nothing is fetched.
 */

type Json = Record<string, unknown>;

const obj = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A schema's type as a person reads it: `integer`, `one of a, b`, `array of string`. */
function typeOf(schema: Json): string {
  if (Array.isArray(schema['enum'])) return `one of ${schema['enum'].map(String).join(', ')}`;
  const t = schema['type'];
  if (t === 'array') return `array of ${typeOf(obj(schema['items'])) || 'values'}`;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.map(String).join(' or ');
  return '';
}

/** Where a schema's value is bounded, in a few words. */
function bounds(schema: Json): string {
  const parts: string[] = [];
  const num = (v: unknown) => (typeof v === 'number' ? String(v) : '');
  if (num(schema['minimum']) || num(schema['maximum']))
    parts.push(`${num(schema['minimum'])}–${num(schema['maximum'])}`);
  if (typeof schema['maxLength'] === 'number')
    parts.push(`at most ${schema['maxLength']} characters`);
  return parts.join(', ');
}

function fieldRows(schema: Json): Html {
  const properties = obj(schema['properties']);
  const required = new Set(Array.isArray(schema['required']) ? schema['required'].map(String) : []);
  return html`${Object.entries(properties).map(([name, raw]) => {
    const s = obj(raw);
    return html`<tr>
      <td>
        <code>${name}</code>${required.has(name) ? html` <span class="badge">required</span>` : ''}
      </td>
      <td>${typeOf(s)}${bounds(s) ? html` <span class="muted">(${bounds(s)})</span>` : ''}</td>
      <td>${text(s['description'])}</td>
    </tr>`;
  })}`;
}

function operation(path: string, method: string, op: Json): Html {
  const params = Array.isArray(op['parameters']) ? op['parameters'].map(obj) : [];
  const body = obj(obj(obj(obj(op['requestBody'])['content'])['application/json'])['schema']);
  const responses = Object.entries(obj(op['responses']));
  const id = text(op['operationId']);
  return html`<section class="endpoint" id="${id}" data-operation="${id}">
    <h3 class="route">
      <span class="method ${method}">${method.toUpperCase()}</span> <code>${path}</code>
    </h3>
    <p>${text(op['summary'])}</p>
    ${
      text(op['description'])
        ? html`<div class="description">
            ${text(op['description'])
              .split('\n\n')
              .map((p) => html`<p>${p}</p>`)}
          </div>`
        : ''
    }
    ${
      params.length > 0
        ? html`<table>
            <thead>
              <tr>
                <th>Parameter</th>
                <th>In</th>
                <th>Type</th>
                <th>What</th>
              </tr>
            </thead>
            <tbody>
              ${params.map(
                (p) =>
                  html`<tr>
                    <td><code>${text(p['name'])}</code></td>
                    <td>${text(p['in'])}</td>
                    <td>${typeOf(obj(p['schema']))}</td>
                    <td>${text(p['description'])}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : ''
    }
    ${
      Object.keys(obj(body['properties'])).length > 0
        ? html`<table>
            <thead>
              <tr>
                <th>Body field</th>
                <th>Type</th>
                <th>What</th>
              </tr>
            </thead>
            <tbody>
              ${fieldRows(body)}
            </tbody>
          </table>`
        : ''
    }
    <p class="muted small">
      Answers:
      ${responses.map(([status, r]) => `${status} ${text(obj(r)['description'])}`).join(' · ')}
    </p>
  </section>`;
}

/** The reference page of an OpenAPI document. */
export function referencePage(session: PageSession, doc: Json): string {
  const byTag = new Map<string, Html[]>();
  for (const [path, methods] of Object.entries(obj(doc['paths']))) {
    for (const [method, raw] of Object.entries(obj(methods))) {
      const op = obj(raw);
      const tag = Array.isArray(op['tags']) ? String(op['tags'][0]) : 'other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), operation(path, method, op)]);
    }
  }
  const tags = [...byTag.keys()].sort();
  const info = obj(doc['info']);
  return layout(
    'API reference',
    session,
    html`<h1>API reference <small class="muted">${text(info['version'])}</small></h1>
      <p>${text(info['description'])}</p>
      <p class="muted">
        Every route takes <code>Authorization: Bearer &lt;operator token&gt;</code>. The same
        document as JSON: <a href="/reference/openapi.json">openapi.json</a> (<code
          >GET /api/openapi.json</code
        >
        with a token). A guide with curl and CLI examples for each job is in
        <code>docs/getting-started.md</code>.
      </p>
      <nav class="tags">${tags.map((t) => html`<a href="#tag-${t}">${t}</a> `)}</nav>
      ${tags.map(
        (t) =>
          html`<h2 id="tag-${t}">${t}</h2>
            ${byTag.get(t) ?? []}`,
      )}`,
  );
}
