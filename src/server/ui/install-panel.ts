import type { InstallAnswer } from '../../app/packages/installs.ts';
import { html, type Html } from './html.ts';
import { postButton } from './controls.ts';
import type { PageSession } from './layout.ts';

/**
 * A package's install on the agent's Tools tab: its state and pin, Enable or Disable (Check
 * when enabled), a drift from the package now running with Upgrade, an open compensation task
 * with Retry and Abandon, and the transition history.
 */
export function installPanel(
  session: PageSession,
  agent: { readonly name: string },
  install: InstallAnswer,
): Html {
  const base = `/agents/${encodeURIComponent(agent.name)}/packages/${encodeURIComponent(install.package)}`;
  const open = install.compensations.filter((c) => c.state === 'open');
  const enabled = install.state === 'enabled';
  return html`<div class="install" data-install-state="${install.state}">
    <span class="badge">${install.state}</span>
    ${
      install.pinned
        ? html`<span class="muted small"
            >pinned to ${install.pinned.version} ${install.pinned.digest.slice(0, 19)}…</span
          >`
        : html`<span class="muted small">never installed</span>`
    }
    ${
      enabled || install.state === 'disabled' || install.transitions.length === 0
        ? postButton(
            session,
            `${base}/${enabled ? 'disable' : 'enable'}`,
            enabled ? 'Disable' : 'Enable',
          )
        : ''
    }
    ${
      enabled && install.hooks.includes('health_check')
        ? postButton(session, `${base}/check`, 'Check')
        : ''
    }
    ${
      install.hooks.length > 0
        ? html`<span class="muted small">hooks: ${install.hooks.join(', ')}</span>`
        : ''
    }
    ${
      install.drift
        ? html`<div class="drift" data-drift="${install.drift.running_version}">
            <p>
              Mesh now runs ${install.package} ${install.drift.running_version}; this install is
              still pinned to ${install.pinned?.version ?? '?'}. Upgrading runs its on_enable.
            </p>
            ${postButton(session, `${base}/upgrade`, `Upgrade to ${install.drift.running_version}`)}
          </div>`
        : ''
    }
    ${open.map(
      (c) =>
        html`<div class="compensation absent" data-compensation="${c.action}">
          <p>${c.action} failed: ${c.reason}</p>
          ${postButton(session, `${base}/compensate`, `Retry ${c.action}`, { fields: { how: 'retry' } })}
          ${postButton(session, `${base}/compensate`, 'Abandon', { fields: { how: 'abandon' } })}
        </div>`,
    )}
    ${
      install.transitions.length > 0
        ? html`<details class="history">
            <summary>${install.transitions.length} transition(s)</summary>
            <ol>
              ${install.transitions.map(
                (t) =>
                  html`<li data-seq="${String(t.seq)}">
                    ${t.created_at.replace('T', ' ').slice(0, 19)} ${t.action} ${t.from} → ${t.to}
                    <strong>${t.outcome}</strong> after ${String(t.attempts)} attempt(s) by
                    ${t.requested_by}${t.error ? html`: <span class="absent">${t.error}</span>` : ''}
                  </li>`,
              )}
            </ol>
          </details>`
        : ''
    }
  </div>`;
}
