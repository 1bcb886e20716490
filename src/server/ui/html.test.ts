import { describe, expect, it } from 'vitest';
import { escapeHtml, html, trusted } from './html.ts';

describe('the html template tag', () => {
  it('escapes every interpolated value, in bodies and attributes', () => {
    const name = `<script>alert("x")</script>' onmouseover='y`;
    const out = html`<a title="${name}">${name}</a>`.text;
    expect(out).not.toContain('<script>');
    expect(out).toBe(
      '<a title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;y">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;y</a>',
    );
  });

  it('keeps nested markup, joins lists and drops empty values', () => {
    const items = ['a&b', 'c'].map((x) => html`<li>${x}</li>`);
    // prettier-ignore
    const list = html`<ul>${items}</ul>${null}${undefined}${false}${0}`;
    expect(list.text).toBe('<ul><li>a&amp;b</li><li>c</li></ul>0');
    expect(html`${trusted('<b>x</b>')}`.text).toBe('<b>x</b>');
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
  });
});
