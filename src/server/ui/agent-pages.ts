import type { AgentPackageView, ConfigFieldView } from '../../app/packages/packages.ts';
import type { Commitment } from '../../app/agents/commitments.ts';
import type { AgentRecord, ModelProviderRecord } from '../../app/records.ts';
import type { JsonValue } from '../../model/json.ts';
import { audienceForm, secretStatus, toggle, postButton } from './controls.ts';
import { html, type Html } from './html.ts';
import {
  agentHeader,
  csrfField,
  fieldError,
  layout,
  listTable,
  sticky,
  time,
  type PageSession,
} from './layout.ts';
import { installPanel } from './install-panel.ts';
import { manifestToolTable, packageHeading } from './tool-table.ts';
import type { BudgetAnswer } from '../../app/agents/budget-operation.ts';

/** The agents, and the form that creates one. */
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
      ${listTable(
        agents,
        'No agents yet.',
        ['Name', 'Model', 'Created', 'Delete'],
        (a) =>
          html`<tr data-agent="${a.name}">
            <td><a href="/agents/${encodeURIComponent(a.name)}/tools">${a.name}</a></td>
            <td>
              ${a.model ? html`${byId.get(a.modelProviderId ?? '') ?? '?'} / ${a.model}` : html`<span class="muted">none</span>`}
            </td>
            <td>${time(a.createdAt)}</td>
            <td>
              <form
                method="post"
                action="/agents/${encodeURIComponent(a.name)}/delete"
                class="inline"
              >
                ${csrfField(session)}<input
                  name="confirm"
                  required
                  autocomplete="off"
                  aria-label="type ${a.name} to confirm"
                  placeholder="type ${a.name}"
                  size="12"
                /><button class="danger">Delete</button>
              </form>
            </td>
          </tr>`,
      )}
      <p class="muted">
        Deleting an agent removes its conversations, runs, memories, tool settings and remote
        connections, and revokes its secrets.
      </p>
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
            value="${sticky(session, 'name', '')}"
          />${fieldError(session, 'name', 'Name')}</label
        >
        <label
          >Model provider
          <select name="provider">
            <option value="">none</option>
            ${providers.map(
              (p) =>
                html`<option
                  value="${p.name}"
                  ${sticky(session, 'provider', '') === p.name ? html` selected` : ''}
                >
                  ${p.name}
                </option>`,
            )}</select
          >${fieldError(session, 'provider', 'Model provider')}</label
        >
        <label
          >Model
          <input
            name="model"
            placeholder="e.g. openai/gpt-4o-mini"
            value="${sticky(session, 'model', '')}"
          />${fieldError(session, 'model', 'Model')}</label
        >
        <label
          >Persona
          <textarea name="persona" rows="3">${sticky(session, 'persona', '')}</textarea
          >${fieldError(session, 'persona', 'Persona')}</label
        >
        <button>Create agent</button>
      </form>`,
  );
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

function offerCell(reason: string | null): Html {
  return reason === null
    ? html`<span class="present">offered</span>`
    : html`<span class="absent" title="${reason}">withheld</span>
        <div class="muted small">${reason}</div>`;
}

function packageSection(session: PageSession, agent: AgentRecord, pkg: AgentPackageView): Html {
  const base = `/agents/${encodeURIComponent(agent.name)}/packages/${encodeURIComponent(pkg.id)}`;
  const plain = pkg.config.filter((f) => f.disposition !== 'secret');
  const secrets = pkg.config.filter((f) => f.disposition === 'secret');
  const offered = pkg.tools.filter(
    (t) => t.offer.direct === null || t.offer.shared === null,
  ).length;
  // A package none of whose tools is offered folds to one line: what it would take is inside.
  return html`<section class="package" data-package="${pkg.id}">
    ${packageHeading(pkg)} ${installPanel(session, agent, pkg.install)}
    <details class="package-body" ${offered > 0 ? html`open` : ''}>
      <summary>
        ${pkg.tools.length} tool${pkg.tools.length === 1 ? '' : 's'}: ${offered}
        offered${
          offered < pkg.tools.length ? `, ${pkg.tools.length - offered} withheld` : ''
        }${plain.length + secrets.length > 0 ? ' · settings and credentials' : ''}
      </summary>
      ${manifestToolTable(pkg.tools, {
        attributes: (t) => html` data-tool="${t.name}"`,
        columns: [
          {
            heading: 'Direct',
            attributes: html` data-audience="direct"`,
            cell: (t) => offerCell(t.offer.direct),
          },
          {
            heading: 'Shared',
            attributes: html` data-audience="shared"`,
            cell: (t) => offerCell(t.offer.shared),
          },
          {
            heading: 'Enabled',
            cell: (t) =>
              toggle(
                session,
                `/agents/${encodeURIComponent(agent.name)}/tools/${encodeURIComponent(t.name)}`,
                'enabled',
                t.enabled,
                {
                  on: 'Enabled',
                  off: 'Disabled',
                  set: `Enable ${t.name}`,
                  unset: `Disable ${t.name}`,
                },
              ),
          },
        ],
      })}
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
                          ><span class="key">${f.key}</span>
                          <span class="badge secret">secret</span>
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
                          ? html`${postButton(session, `${base}/secrets/${encodeURIComponent(f.key)}/revoke`, 'Revoke', { danger: true })}`
                          : ''
                      }
                    </div>`,
                )}
              </div>`
          : ''
      }
      <h3>Audiences</h3>
      ${audienceForm(session, `${base}/audiences`, pkg.audiences, 'Save audiences')}
    </details>
  </section>`;
}

/** The Tools tab: every package rendered from its manifest, as installed for the agent. */
export function toolsPage(
  session: PageSession,
  agent: AgentRecord,
  packages: readonly AgentPackageView[],
  commitments: readonly Commitment[] = [],
): string {
  return layout(
    `${agent.name} · Tools`,
    session,
    html`${agentHeader(agent, 'tools')}
      <p class="muted">
        Every package below is rendered from its manifest. Built-in tools are on by default; a tool
        is offered to the model only when it is enabled, its needs are met and the conversation's
        audience is allowed.
        <a href="/agents/${encodeURIComponent(agent.name)}/call"
          >Call a tool as the operator, and see every tool a turn is offered or withheld</a
        >.
      </p>
      ${commitmentsSection(agent, commitments)}
      ${packages.map((p) => packageSection(session, agent, p))}`,
  );
}

/** What the agent promised to do later and has not done: soonest due first. */
function commitmentsSection(agent: AgentRecord, commitments: readonly Commitment[]): Html | string {
  if (commitments.length === 0) return '';
  return html`<section class="commitments">
    <h3>Open commitments</h3>
    <ul>
      ${commitments.map(
        (c) =>
          html`<li data-commitment="${c.id}">
            ${c.text}
            <span class="muted">${c.due ? html`due ${time(new Date(c.due))}` : 'no due time'}</span>
          </li>`,
      )}
    </ul>
    <p class="muted">
      The agent closes one with <code>fulfil</code>; one that falls due is posted to its
      conversation with a turn to do it. From a terminal:
      <code>mesh agents show ${agent.name}</code>.
    </p>
  </section>`;
}

/** The Settings tab: the agent's model provider and model, persona and image input. */
export function settingsPage(
  session: PageSession,
  agent: AgentRecord,
  providers: readonly ModelProviderRecord[],
  budget: BudgetAnswer,
): string {
  const base = `/agents/${encodeURIComponent(agent.name)}`;
  return layout(
    `${agent.name} · Settings`,
    session,
    html`${agentHeader(agent, 'settings')}
      <form method="post" action="${base}/settings" class="stack">
        ${csrfField(session)}
        <label
          >Model provider
          <select name="provider">
            ${agent.modelProviderId === null ? html`<option value="">none</option>` : ''}
            ${providers.map(
              (p) =>
                html`<option
                  value="${p.name}"
                  ${p.id === agent.modelProviderId ? html` selected` : ''}
                >
                  ${p.name}
                </option>`,
            )}
          </select></label
        >
        <label>Model <input name="model" value="${agent.model ?? ''}" /></label>
        <label>Persona <textarea name="persona" rows="6">${agent.persona ?? ''}</textarea></label>
        <label
          ><input
            type="checkbox"
            name="image_input"
            value="on"
            ${agent.modelImageInput ? html` checked` : ''}
          />
          The model accepts images (images tools return are shown to it)</label
        >
        <button>Save settings</button>
      </form>
      <p class="muted">
        The same change from a terminal: <code>mesh agents update ${agent.name} --model M</code>;
        over the API: <code>PATCH /api/agents/${agent.name}</code>.
      </p>
      ${budgetForm(session, agent, budget)}`,
  );
}

/** The budget profile's meters as the form shows them: name, label, unit. */
const BUDGET_FIELDS = [
  ['rounds', 'Rounds (model requests)', ''],
  ['tool_calls', 'Tool calls', ''],
  ['tokens', 'Tokens (input and output)', ''],
  ['wall_clock_seconds', 'Wall clock', 'seconds'],
  ['compute_seconds', 'Workspace compute', 'seconds'],
  ['session_minutes', 'Browser sessions', 'minutes'],
  ['question_wait_seconds', 'A question waits for its answer', 'seconds'],
] as const;

/** The agent's budget profile: what each of its runs may spend; a run copies it when created. */
function budgetForm(session: PageSession, agent: AgentRecord, budget: BudgetAnswer): Html {
  const base = `/agents/${encodeURIComponent(agent.name)}`;
  return html`<h3>Budget per run</h3>
    <form method="post" action="${base}/budget" class="stack">
      ${csrfField(session)}
      ${BUDGET_FIELDS.map(
        ([name, label, unit]) =>
          html`<label
            >${label}${unit ? ` (${unit})` : ''}
            <input
              name="${name}"
              type="number"
              min="1"
              value="${sticky(session, name, String(budget.budget[name]))}"
            />${budget.set.includes(name) ? '' : html` <span class="muted">default</span>`}${fieldError(
              session,
              name,
              label,
            )}</label
          >`,
      )}
      <button>Save budget</button>
    </form>
    <p class="muted">
      Each run copies this when it is created; a change never reaches a run under way. The last
      permitted round carries no tools. From a terminal:
      <code>mesh agents budget ${agent.name} --rounds N --wall-clock 30m</code>; over the API:
      <code>PUT /api/agents/${agent.name}/budget</code>.
    </p>`;
}
