import type {
  AgentPackageView,
  ConfigFieldView,
  PackageView,
  SecretSlotView,
  ToolView,
} from '../../app/operator.ts';
import type {
  AgentRecord,
  ConversationRecord,
  MessageRecord,
  ModelProviderRecord,
  RunRecord,
  StepRecord,
} from '../../app/records.ts';
import type { JsonValue } from '../../model/json.ts';
import { html, type Html } from './html.ts';

/** What every signed-in page knows: the session's CSRF token and a one-shot notice. */
export interface PageSession {
  readonly csrf: string;
  readonly flash?: { readonly kind: 'ok' | 'error'; readonly text: string } | undefined;
}

export function time(d: Date | null | undefined): Html {
  if (!d) return html`<span class="muted">—</span>`;
  const iso = d.toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 19)}</time>`;
}

export function csrfField(session: PageSession): Html {
  return html`<input type="hidden" name="csrf" value="${session.csrf}" />`;
}

/** The frame of every page. */
export function layout(title: string, session: PageSession | undefined, main: Html): string {
  const nav = session
    ? html`<nav>
        <a href="/agents">Agents</a>
        <a href="/providers">Model providers</a>
        <a href="/packages">Packages</a>
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
      </head>
      <body>
        <header><a class="brand" href="/">Mesh</a>${nav}</header>
        <main>${flash}${main}</main>
      </body>
    </html>`.text;
}

export function loginPage(error?: string): string {
  return layout(
    'Log in',
    undefined,
    html`<section class="login">
      <h1>Log in</h1>
      <p>
        Paste an operator token. One was printed when this Mesh first started;
        <code>mesh tokens create</code> makes another.
      </p>
      ${error ? html`<p class="flash error" role="alert">${error}</p>` : ''}
      <form method="post" action="/login">
        <label
          >Operator token <input type="password" name="token" autocomplete="off" required autofocus
        /></label>
        <button>Log in</button>
      </form>
    </section>`,
  );
}

export function errorPage(
  session: PageSession | undefined,
  status: number,
  message: string,
): string {
  return layout(
    `Error ${status}`,
    session,
    html`<h1>${status === 404 ? 'Not found' : 'Something went wrong'}</h1>
      <p>${message}</p>
      <p><a href="/agents">Back to agents</a></p>`,
  );
}

export function agentsPage(
  session: PageSession,
  agents: readonly AgentRecord[],
  providers: readonly ModelProviderRecord[],
): string {
  const byId = new Map(providers.map((p) => [p.id, p.name]));
  return layout(
    'Agents',
    session,
    html`<h1>Agents</h1>
      ${
        agents.length === 0
          ? html`<p class="muted">No agents yet.</p>`
          : html`<table class="list">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Model</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                ${agents.map(
                  (a) =>
                    html`<tr>
                      <td><a href="/agents/${encodeURIComponent(a.name)}/tools">${a.name}</a></td>
                      <td>
                        ${a.model ? html`${byId.get(a.modelProviderId ?? '') ?? '?'} / ${a.model}` : html`<span class="muted">none</span>`}
                      </td>
                      <td>${time(a.createdAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      <h2>New agent</h2>
      <form method="post" action="/agents" class="stack">
        ${csrfField(session)}
        <label
          >Name
          <input
            name="name"
            required
            pattern="[a-z0-9][a-z0-9_\\-]{0,62}"
            placeholder="lowercase, digits, - and _"
        /></label>
        <label
          >Model provider
          <select name="provider">
            <option value="">none</option>
            ${providers.map((p) => html`<option value="${p.name}">${p.name}</option>`)}
          </select></label
        >
        <label>Model <input name="model" placeholder="e.g. openai/gpt-4o-mini" /></label>
        <label>Persona <textarea name="persona" rows="3"></textarea></label>
        <button>Create agent</button>
      </form>`,
  );
}

type AgentTab = 'tools' | 'mcp' | 'chat' | 'runs';

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
      ${link('tools', 'Tools')}${link('mcp', 'MCP')}${link('chat', 'Chat')}${link('runs', 'Runs')}
    </div>`;
}

function configInput(field: ConfigFieldView, value: JsonValue | undefined): Html {
  const name = 'value';
  const current =
    typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : '';
  switch (field.type) {
    case 'boolean':
      return html`<select name="${name}">
        <option value="true" ${value === true ? html` selected` : ''}>true</option>
        <option value="false" ${value === false ? html` selected` : ''}>false</option>
      </select>`;
    case 'integer':
      return html`<input type="number" step="1" name="${name}" value="${current}" />`;
    case 'number':
      return html`<input type="number" step="any" name="${name}" value="${current}" />`;
    case 'string':
      return html`<input type="text" name="${name}" value="${current}" />`;
    default: {
      const never: never = field.type;
      return html`${String(never)}`;
    }
  }
}

function secretStatus(slot: SecretSlotView | undefined): Html {
  return slot?.present
    ? html`<span class="present">present</span>
        <span class="muted">version ${slot.version ?? '?'}, captured ${time(slot.createdAt)}</span>`
    : html`<span class="absent">not captured</span>`;
}

function packageSection(session: PageSession, agent: AgentRecord, pkg: AgentPackageView): Html {
  const base = `/agents/${encodeURIComponent(agent.name)}/packages/${encodeURIComponent(pkg.id)}`;
  const plain = pkg.config.filter((f) => f.disposition !== 'secret');
  const secrets = pkg.config.filter((f) => f.disposition === 'secret');
  return html`<section class="package" data-package="${pkg.id}">
    ${packageHeading(pkg)}
    <table class="tools">
      <thead>
        <tr>
          <th>Tool</th>
          <th>Class</th>
          <th>Replay</th>
          <th>Needs</th>
          <th>Direct</th>
          <th>Shared</th>
          <th>Enabled</th>
        </tr>
      </thead>
      <tbody>
        ${pkg.tools.map(
          (t) =>
            html`<tr data-tool="${t.name}">
              ${toolCells(t)}
              <td data-audience="direct">${offerCell(t.offer.direct)}</td>
              <td data-audience="shared">${offerCell(t.offer.shared)}</td>
              <td>
                <form
                  method="post"
                  action="/agents/${encodeURIComponent(agent.name)}/tools/${encodeURIComponent(t.name)}"
                  class="inline"
                >
                  ${csrfField(session)}<input
                    type="hidden"
                    name="enabled"
                    value="${t.enabled ? 'false' : 'true'}"
                  />
                  <button
                    class="${t.enabled ? 'toggle on' : 'toggle off'}"
                    aria-label="${t.enabled ? `Disable ${t.name}` : `Enable ${t.name}`}"
                  >
                    ${t.enabled ? 'Enabled' : 'Disabled'}
                  </button>
                </form>
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${
      plain.length > 0
        ? html`<h3>Settings</h3>
            <div class="fields">
              ${plain.map(
                (f) =>
                  html`<form
                    method="post"
                    action="${base}/config/${encodeURIComponent(f.key)}"
                    class="field"
                    data-key="${f.key}"
                  >
                    ${csrfField(session)}
                    <label
                      ><span class="key">${f.key}</span>
                      <span class="badge ${f.disposition}">${f.disposition}</span>
                      <span class="muted"
                        >${f.type}${f.default !== undefined ? html`, default ${JSON.stringify(f.default)}` : ''}</span
                      >
                      ${configInput(f, pkg.values[f.key])}</label
                    >
                    <p class="muted">${f.description}</p>
                    <button>Save</button>
                  </form>`,
              )}
            </div>`
        : ''
    }
    ${
      secrets.length > 0
        ? html`<h3>Credentials</h3>
            <div class="fields">
              ${secrets.map(
                (f) =>
                  html`<div class="field secret" data-key="${f.key}">
                    <form method="post" action="${base}/secrets/${encodeURIComponent(f.key)}">
                      ${csrfField(session)}
                      <label
                        ><span class="key">${f.key}</span> <span class="badge secret">secret</span>
                        <span class="muted">${f.kind ?? ''}</span>
                        <input
                          type="password"
                          name="value"
                          autocomplete="off"
                          placeholder="write-only"
                          required
                      /></label>
                      <p class="status">${secretStatus(pkg.secrets[f.key])}</p>
                      <p class="muted">${f.description}</p>
                      <button>${pkg.secrets[f.key]?.present ? 'Replace' : 'Capture'}</button>
                    </form>
                    ${
                      pkg.secrets[f.key]?.present
                        ? html`<form
                            method="post"
                            action="${base}/secrets/${encodeURIComponent(f.key)}/revoke"
                            class="inline"
                          >
                            ${csrfField(session)}<button class="danger">Revoke</button>
                          </form>`
                        : ''
                    }
                  </div>`,
              )}
            </div>`
        : ''
    }
    <h3>Audiences</h3>
    ${audienceForm(session, `${base}/audiences`, pkg.audiences, 'Save audiences')}
  </section>`;
}

/** Checkboxes for the conversation audiences something is limited to (none ticked: nowhere). */
export function audienceForm(
  session: PageSession,
  action: string,
  audiences: readonly string[] | null | undefined,
  button: string,
): Html {
  return html`<form method="post" action="${action}" class="inline audiences">
    ${csrfField(session)}
    ${(['direct', 'shared'] as const).map(
      (a) =>
        html`<label
          ><input
            type="checkbox"
            name="audience"
            value="${a}"
            ${!audiences || audiences.includes(a) ? html` checked` : ''}
          />
          ${a} conversations</label
        > `,
    )}
    <button>${button}</button>
  </form>`;
}

/** A package's heading and description, as its manifest gives them. */
function packageHeading(p: { id: string; version: string; description: string }): Html {
  return html`<h2>${p.id} <small>${p.version}</small></h2>
    <p>${p.description}</p>`;
}

/** The cells every tool row starts with: name and description, class, replay, needs. */
function toolCells(t: ToolView): Html {
  return html`<td>
      <strong>${t.name}</strong>
      <div class="muted">${t.description}</div>
    </td>
    <td><span class="badge ${t.class}">${t.class}</span></td>
    <td>${t.replay}</td>
    <td>${t.needs.length === 0 ? html`<span class="muted">none</span>` : t.needs.join(', ')}</td>`;
}

function offerCell(reason: string | null): Html {
  return reason === null
    ? html`<span class="present">offered</span>`
    : html`<span class="absent" title="${reason}">withheld</span>
        <div class="muted small">${reason}</div>`;
}

export function toolsPage(
  session: PageSession,
  agent: AgentRecord,
  packages: readonly AgentPackageView[],
): string {
  return layout(
    `${agent.name} · Tools`,
    session,
    html`${agentHeader(agent, 'tools')}
      <p class="muted">
        Every package below is rendered from its manifest. Built-in tools are on by default; a tool
        is offered to the model only when it is enabled, its needs are met and the conversation's
        audience is allowed.
      </p>
      ${packages.map((p) => packageSection(session, agent, p))}`,
  );
}

export function chatPage(
  session: PageSession,
  agent: AgentRecord,
  conversations: readonly (ConversationRecord & { messages: number })[],
  current:
    | {
        conversation: ConversationRecord;
        messages: readonly MessageRecord[];
        runs: readonly RunRecord[];
      }
    | undefined,
): string {
  const base = `/agents/${encodeURIComponent(agent.name)}/chat`;
  const runFor = new Map(current?.runs.map((r) => [r.inboundMessageId, r]) ?? []);
  return layout(
    `${agent.name} · Chat`,
    session,
    html`${agentHeader(agent, 'chat')}
      <div class="chat">
        <aside>
          <a href="${base}" class="${current ? '' : 'active'}">New conversation</a>
          ${conversations.map(
            (c) =>
              html`<a
                href="${base}?conversation=${c.id}"
                class="${current?.conversation.id === c.id ? 'active' : ''}"
                >${time(c.createdAt)}
                <span class="muted">${c.audience}, ${c.messages} messages</span></a
              >`,
          )}
        </aside>
        <section class="conversation">
          ${
            current
              ? html`<ol class="messages">
                  ${current.messages.map((m) => {
                    const run = m.direction === 'inbound' ? runFor.get(m.id) : undefined;
                    return html`<li class="message ${m.direction}">
                      <div class="meta">
                        ${m.direction === 'inbound' ? m.actor : agent.name} ·
                        ${time(m.createdAt)}${run ? html` · <a href="/runs/${run.id}" class="run-link">run ${run.status}</a>` : ''}
                      </div>
                      <div class="body">${m.body}</div>
                    </li>`;
                  })}
                </ol>`
              : html`<p class="muted">Start a conversation with ${agent.name}.</p>`
          }
          <form method="post" action="${base}" class="send">
            ${csrfField(session)}
            ${
              current
                ? html`<input
                    type="hidden"
                    name="conversation"
                    value="${current.conversation.id}"
                  />`
                : html`<label
                    >Audience
                    <select name="audience">
                      <option value="direct">direct</option>
                      <option value="shared">shared</option>
                    </select></label
                  >`
            }
            <textarea name="body" rows="3" required placeholder="Message ${agent.name}"></textarea>
            <button>Send</button>
          </form>
        </section>
      </div>`,
  );
}

export function runsPage(
  session: PageSession,
  agent: AgentRecord,
  runs: readonly RunRecord[],
): string {
  return layout(
    `${agent.name} · Runs`,
    session,
    html`${agentHeader(agent, 'runs')}
    ${
      runs.length === 0
        ? html`<p class="muted">No runs yet.</p>`
        : html`<table class="list">
            <thead>
              <tr>
                <th>Run</th>
                <th>Kind</th>
                <th>Status</th>
                <th>Started</th>
                <th>Finished</th>
              </tr>
            </thead>
            <tbody>
              ${runs.map(
                (r) =>
                  html`<tr>
                    <td><a href="/runs/${r.id}">${r.id.slice(0, 8)}</a></td>
                    <td>${r.kind}</td>
                    <td>
                      <span class="status ${r.status}">${r.status}</span
                      >${r.reason ? html` <span class="muted">${r.reason}</span>` : ''}
                    </td>
                    <td>${time(r.createdAt)}</td>
                    <td>${time(r.finishedAt)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`,
  );
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The parts of a request's token estimate, in the order they are priced. */
const ESTIMATE_PARTS = ['system', 'memory', 'history', 'current', 'round', 'tools'] as const;

function stepBody(step: StepRecord): Html {
  const data = step.data ?? {};
  switch (step.kind) {
    case 'model_request': {
      const estimate = (data['estimate'] ?? {}) as Record<string, number | undefined>;
      const offered = (data['offered'] as string[] | undefined) ?? [];
      const withheld = (data['withheld'] as { name: string; reason: string }[] | undefined) ?? [];
      return html`<p>
          Round ${JSON.stringify(data['round'] ?? '?')} ·
          <strong class="estimate">${estimate['total'] ?? '?'} tokens</strong> estimated
          <span class="muted"
            >(${ESTIMATE_PARTS.map((k) => `${k} ${estimate[k] ?? '?'}`).join(', ')} of a
            ${estimate['budget'] ?? '?'}-token
            budget${
              estimate['droppedTurns'] ? `; ${estimate['droppedTurns']} older turns left out` : ''
            })</span
          >
        </p>
        <div class="offered">
          <span class="label">Offered</span>
          ${offered.length === 0 ? html`<span class="muted">no tools</span>` : offered.map((n) => html`<code class="tool">${n}</code> `)}
        </div>
        ${
          withheld.length > 0
            ? html`<div class="withheld">
                <span class="label">Withheld</span>
                <ul>
                  ${withheld.map((w) => html`<li><code>${w.name}</code> — ${w.reason}</li>`)}
                </ul>
              </div>`
            : ''
        }`;
    }
    case 'model_response': {
      const calls = (data['toolCalls'] as { name: string; arguments?: string }[] | undefined) ?? [];
      return html`${str(data['content']) ? html`<p class="body">${str(data['content'])}</p>` : ''}
      ${calls.length > 0 ? html`<p>Calls ${calls.map((c) => html`<code class="tool">${c.name}</code> `)}</p>` : ''}`;
    }
    case 'tool_call':
      return html`<p>
          <code class="tool">${step.toolName ?? '?'}</code>
          <span class="badge ${step.class ?? ''}">${step.class ?? ''}</span> ${step.replay ?? ''}
          <span class="muted">call ${step.callId ?? '?'}</span>
        </p>
        ${step.committedAt ? html`<p class="commit">Commit stamp ${time(step.committedAt)}</p>` : ''}
        <pre>${step.arguments ?? ''}</pre>`;
    case 'observation': {
      const o = step.observation ?? {};
      const truncated = o['truncated'] as { artifactId?: string; totalBytes?: number } | undefined;
      return html`<p>
          <span class="badge">${str(o['kind'])}</span>
          <span class="muted">call ${step.callId ?? '?'}</span>
        </p>
        <pre>${str(o['text'])}</pre>
        ${truncated ? html`<p class="muted">Truncated: ${truncated.totalBytes ?? '?'} bytes in artifact ${truncated.artifactId ?? '?'}</p>` : ''}`;
    }
    case 'reply':
      return html`<p class="body">${str(data['body'])}</p>`;
    case 'note':
      return html`<pre>${JSON.stringify(data, null, 2)}</pre>`;
    default: {
      const never: never = step.kind;
      return html`${String(never)}`;
    }
  }
}

export function runPage(
  session: PageSession,
  agent: AgentRecord | undefined,
  run: RunRecord,
  steps: readonly StepRecord[],
): string {
  return layout(
    `Run ${run.id.slice(0, 8)}`,
    session,
    html`<h1>Run <code>${run.id}</code></h1>
      <dl class="summary">
        <dt>Agent</dt>
        <dd>
          ${agent ? html`<a href="/agents/${encodeURIComponent(agent.name)}/runs">${agent.name}</a>` : run.agentId}
        </dd>
        <dt>Kind</dt>
        <dd>${run.kind}</dd>
        <dt>Status</dt>
        <dd>
          <span class="status ${run.status}">${run.status}</span
          >${run.reason ? html` <span class="muted">${run.reason}</span>` : ''}
        </dd>
        <dt>Usage</dt>
        <dd><code>${JSON.stringify(run.usage)}</code></dd>
        <dt>Budget</dt>
        <dd><code>${JSON.stringify(run.budget)}</code></dd>
        <dt>Commit boundary</dt>
        <dd>
          ${run.committedAt ? time(run.committedAt) : html`<span class="muted">not crossed</span>`}
        </dd>
        <dt>Created</dt>
        <dd>${time(run.createdAt)}</dd>
        ${
          agent && run.conversationId
            ? html`<dt>Conversation</dt>
                <dd>
                  <a
                    href="/agents/${encodeURIComponent(agent.name)}/chat?conversation=${run.conversationId}"
                    >open</a
                  >
                </dd>`
            : ''
        }
      </dl>
      <ol class="steps">
        ${steps.map(
          (s) =>
            html`<li class="step ${s.kind}" data-kind="${s.kind}">
              <div class="step-head">
                <span class="seq">${s.seq}</span> <strong>${s.kind.replace('_', ' ')}</strong>
                <span class="status ${s.status}">${s.status}</span>
                <span class="muted">${time(s.startedAt)}</span>
              </div>
              ${stepBody(s)}
            </li>`,
        )}
      </ol>`,
  );
}

export function providersPage(
  session: PageSession,
  providers: readonly (ModelProviderRecord & { apiKey: SecretSlotView | null })[],
  more: Html = html``,
): string {
  return layout(
    'Model providers',
    session,
    html`<h1>Model providers</h1>
      ${
        providers.length === 0
          ? html`<p class="muted">No providers yet.</p>`
          : html`<table class="list">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Kind</th>
                  <th>Endpoint</th>
                  <th>Context</th>
                  <th>API key</th>
                </tr>
              </thead>
              <tbody>
                ${providers.map(
                  (p) =>
                    html`<tr data-provider="${p.name}">
                      <td>${p.name}</td>
                      <td>${p.kind}</td>
                      <td>${p.baseUrl ?? html`<span class="muted">—</span>`}</td>
                      <td>${p.contextTokens}</td>
                      <td>
                        ${
                          p.apiKey
                            ? html`${secretStatus(p.apiKey)}
                                <form
                                  method="post"
                                  action="/providers/${encodeURIComponent(p.name)}/api-key"
                                  class="inline"
                                >
                                  ${csrfField(session)}<input
                                    type="password"
                                    name="value"
                                    autocomplete="off"
                                    placeholder="new key"
                                    required
                                  /><button>Replace</button>
                                </form>`
                            : html`<span class="muted">scripted</span>`
                        }
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      <h2>Add an OpenAI-compatible endpoint</h2>
      <form method="post" action="/providers" class="stack">
        ${csrfField(session)}<input type="hidden" name="kind" value="openai_compatible" />
        <label>Name <input name="name" required /></label>
        <label
          >Base URL
          <input name="base_url" type="url" required placeholder="https://openrouter.ai/api/v1"
        /></label>
        <label>API key <input name="api_key" type="password" autocomplete="off" required /></label>
        <label
          >Context tokens
          <input name="context_tokens" type="number" min="1000" step="1" placeholder="32000"
        /></label>
        <button>Add provider</button>
      </form>
      <h2>Add a scripted provider</h2>
      <form method="post" action="/providers" class="stack">
        ${csrfField(session)}<input type="hidden" name="kind" value="scripted" />
        <label>Name <input name="name" required /></label>
        <label
          >Script (JSON)
          <textarea name="script" rows="6" required>{"fallback": {"content": "Hello."}}</textarea>
        </label>
        <button>Add provider</button>
      </form>
      ${more}`,
  );
}

export function packagesPage(session: PageSession, packages: readonly PackageView[]): string {
  return layout(
    'Packages',
    session,
    html`<h1>Packages</h1>
      <p class="muted">
        Installed tool packages, as their manifests declare them. Enable and configure them per
        agent on the agent's Tools tab.
      </p>
      ${packages.map(
        (p) =>
          html`<section class="package" data-package="${p.id}">
            ${packageHeading(p)}
            <table class="tools">
              <thead>
                <tr>
                  <th>Tool</th>
                  <th>Class</th>
                  <th>Replay</th>
                  <th>Needs</th>
                </tr>
              </thead>
              <tbody>
                ${p.tools.map(
                  (t) =>
                    html`<tr>
                      ${toolCells(t)}
                    </tr>`,
                )}
              </tbody>
            </table>
            ${
              p.config.length > 0
                ? html`<h3>Fields</h3>
                    <ul>
                      ${p.config.map((f) => html`<li><code>${f.key}</code> <span class="badge ${f.disposition}">${f.disposition}</span> ${f.type} — ${f.description}</li>`)}
                    </ul>`
                : ''
            }
          </section>`,
      )}`,
  );
}
