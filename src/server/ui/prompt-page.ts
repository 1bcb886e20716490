import type { PromptAnswer } from '../../app/runs/prompt-view.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../../model/json.ts';
import { html, type Html } from './html.ts';
import { layout, type PageSession } from './layout.ts';

/*
 * What a model request was sent, exactly (its prompt snapshot): each message with its role, the
 * calls an assistant message carried, then every tool definition offered, its schema folded.
 */

function objectOf(v: JsonValue): JsonObject {
  return isJsonObject(v) ? v : {};
}

function messageItem(m: JsonValue, i: number): Html {
  const o = objectOf(m);
  const role = typeof o['role'] === 'string' ? o['role'] : '?';
  const calls: readonly JsonValue[] = Array.isArray(o['toolCalls']) ? o['toolCalls'] : [];
  const images: readonly JsonValue[] = Array.isArray(o['images']) ? o['images'] : [];
  const content = typeof o['content'] === 'string' ? o['content'] : '';
  return html`<li class="message ${role}" data-message="${String(i + 1)}">
    <span class="label">${role}</span>
    ${typeof o['toolCallId'] === 'string' ? html`<span class="muted">for ${o['toolCallId']}</span>` : ''}
    ${content === '' ? '' : html`<pre class="body">${content}</pre>`}
    ${calls.map((c) => {
      const call = objectOf(c);
      return html`<p>
        → <code class="tool">${typeof call['name'] === 'string' ? call['name'] : '?'}</code>
        <code>${typeof call['arguments'] === 'string' ? call['arguments'] : ''}</code>
      </p>`;
    })}
    ${images.length > 0 ? html`<p class="muted">${String(images.length)} image(s)</p>` : ''}
  </li>`;
}

function toolItem(t: JsonValue): Html {
  const o = objectOf(t);
  return html`<li data-tool="${typeof o['name'] === 'string' ? o['name'] : '?'}">
    <code class="tool">${typeof o['name'] === 'string' ? o['name'] : '?'}</code>
    <span class="muted">${typeof o['description'] === 'string' ? o['description'] : ''}</span>
    <details>
      <summary>parameters</summary>
      <pre>${JSON.stringify(o['parameters'] ?? {}, null, 2)}</pre>
    </details>
  </li>`;
}

/** The page of one request's snapshot, linked from its step on the run page. */
export function promptPage(session: PageSession, runId: string, p: PromptAnswer): string {
  return layout(
    `Run ${runId.slice(0, 8)} request ${p.request}`,
    session,
    html`<h1>What request ${String(p.request)} sent</h1>
      <p>
        <a href="/runs/${runId}">Run <code>${runId.slice(0, 8)}</code></a
        >, step ${String(p.seq)}${p.round === null ? '' : `, round ${p.round}`} ·
        <code>${JSON.stringify(p.params)}</code> · messages after redaction
      </p>
      <h2>Messages (${String(p.messages.length)})</h2>
      <ol class="prompt">
        ${p.messages.map(messageItem)}
      </ol>
      <h2>Tools offered (${String(p.tools.length)})</h2>
      <ul class="prompt-tools">
        ${p.tools.map(toolItem)}
      </ul>
      ${p.missing > 0 ? html`<p class="absent">${String(p.missing)} part(s) are no longer stored.</p>` : ''}`,
  );
}
