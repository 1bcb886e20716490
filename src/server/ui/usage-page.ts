import type { UsageAnswer } from '../../app/runs/usage-operation.ts';
import { html, type Html } from './html.ts';
import { layout, listTable, type PageSession } from './layout.ts';

/*
 * The usage overview: runs, tokens and tool calls per day per agent as stacked bar charts, the
 * commonest failures, and the slowest tools. The charts are SVG drawn here on the server: no
 * script, no library, nothing fetched from elsewhere, and a table beside each for the numbers.
 */

/** How many agents get a colour of their own; the rest share the last one. */
const SERIES = 8;
const WIDTH = 720;
const HEIGHT = 200;
const AXIS = 34;

/** The UTC dates of the last `days` days, oldest first. */
function lastDays(days: number, today = new Date()): string[] {
  const out: string[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const d = new Date(
      Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i),
    );
    out.push(d.toISOString().slice(0, 10));
  }
  return out;
}

type Metric = 'runs' | 'tokens' | 'tool_calls';

/** A stacked bar chart of one metric: a bar per day, a segment per agent. */
function stackedChart(
  usage: UsageAnswer,
  metric: Metric,
  title: string,
  agents: readonly string[],
): Html {
  const days = lastDays(usage.days);
  const value = (day: string, agent: string) =>
    usage.by_day.find((d) => d.day === day && d.agent === agent)?.[metric] ?? 0;
  const totals = days.map((day) => agents.reduce((n, a) => n + value(day, a), 0));
  const max = Math.max(1, ...totals);
  const slot = WIDTH / days.length;
  const bar = Math.max(2, slot * 0.7);
  const plot = HEIGHT - AXIS;
  const segments = days.flatMap((day, i) => {
    let y = plot;
    return agents.flatMap((agent, a) => {
      const v = value(day, agent);
      if (v === 0) return [];
      const h = Math.max(1, (v / max) * (plot - 8));
      y -= h;
      return [
        html`<rect
          class="series-${Math.min(a, SERIES - 1)}"
          x="${(i * slot + (slot - bar) / 2).toFixed(1)}"
          y="${y.toFixed(1)}"
          width="${bar.toFixed(1)}"
          height="${h.toFixed(1)}"
          ><title>${day} · ${agent}: ${v.toLocaleString('en')} ${title.toLowerCase()}</title></rect
        >`,
      ];
    });
  });
  const every = Math.ceil(days.length / 4);
  const labels = days.flatMap((day, i) =>
    i % every === 0 || i === days.length - 1
      ? [
          html`<text x="${(i * slot + slot / 2).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="middle"
            >${day.slice(5)}</text
          >`,
        ]
      : [],
  );
  return html`<figure class="chart" data-metric="${metric}">
    <figcaption>
      ${title} per day <span class="muted">(most in a day: ${max.toLocaleString('en')})</span>
    </figcaption>
    <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${title} per day per agent">
      <line x1="0" y1="${plot}" x2="${WIDTH}" y2="${plot}" class="axis" />
      ${segments} ${labels}
    </svg>
  </figure>`;
}

/** Which colour stands for which agent. */
function legend(agents: readonly string[]): Html {
  return html`<ul class="legend">
    ${agents.map(
      (agent, a) =>
        html`<li>
          <svg viewBox="0 0 10 10" class="swatch">
            <rect class="series-${Math.min(a, SERIES - 1)}" width="10" height="10" />
          </svg>
          ${agent}
        </li>`,
    )}
  </ul>`;
}

export function usagePage(session: PageSession, usage: UsageAnswer): string {
  const agents = [...new Set(usage.by_day.map((d) => d.agent))].sort();
  const slowest = Math.max(1, ...usage.slowest_tools.map((t) => t.p95_ms));
  return layout(
    'Usage',
    session,
    html`<h1>Usage</h1>
      <form method="get" action="/usage" class="inline">
        <label
          >Days
          <select name="days">
            ${[7, 14, 30, 90].map(
              (d) =>
                html`<option value="${d}" ${d === usage.days ? html` selected` : ''}>${d}</option>`,
            )}
          </select></label
        >
        <button>Show</button>
      </form>
      ${
        agents.length === 0
          ? html`<p class="muted">No runs in the last ${usage.days} days.</p>`
          : html`${legend(agents)}
              <div class="charts">
                ${stackedChart(usage, 'runs', 'Runs', agents)}
                ${stackedChart(usage, 'tokens', 'Tokens', agents)}
                ${stackedChart(usage, 'tool_calls', 'Tool calls', agents)}
              </div>`
      }
      <h2>Failures by reason</h2>
      ${listTable(
        usage.failures,
        'No failed runs.',
        ['Runs', 'Ended', 'Reason'],
        (f) =>
          html`<tr>
            <td>${f.runs}</td>
            <td><span class="status ${f.status}">${f.status}</span></td>
            <td>${f.reason}</td>
          </tr>`,
      )}
      <h2>Slowest tools</h2>
      ${listTable(
        usage.slowest_tools,
        'No tool calls.',
        ['Tool', 'Calls', 'p50', 'p95', ''],
        (t) =>
          html`<tr>
            <td><code>${t.tool}</code></td>
            <td>${t.calls}</td>
            <td>${t.p50_ms} ms</td>
            <td>${t.p95_ms} ms</td>
            <td class="latency">
              <svg
                viewBox="0 0 100 8"
                preserveAspectRatio="none"
                role="img"
                aria-label="p95 ${t.p95_ms} ms"
              >
                <rect class="p95" width="${((t.p95_ms / slowest) * 100).toFixed(1)}" height="8" />
                <rect class="p50" width="${((t.p50_ms / slowest) * 100).toFixed(1)}" height="8" />
              </svg>
            </td>
          </tr>`,
      )}
      <p class="muted">
        The same from a terminal: <code>mesh runs usage --days ${usage.days}</code>; over the API:
        <code>GET /api/usage?days=${usage.days}</code>.
      </p>`,
  );
}
