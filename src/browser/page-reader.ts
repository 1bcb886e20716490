/**
 * The function `browser_read` runs in the page (as the argument of `page.evaluate`): the page as
 * markdown. `text` is what a person sees (the body's rendered text); `snapshot` is the page's
 * structure — headings, text, lists — with every control it can act on marked `[eN]` and its role
 * and name, the ref `browser_act` targets. Refs are written on the elements as `data-mesh-ref`,
 * cleared and given again on each snapshot. What a field holds is never read out: a field says
 * only whether it is filled, so a password a person typed during a handoff never leaves the page.
 *
 * Plain JavaScript in a string: it runs in the page, not here (a test compiles it).
 */
export const READ_PAGE_FUNCTION = `(mode) => {
  const body = document.body;
  if (!body) return { markdown: '', refs: 0, title: document.title };
  if (mode === 'text') return { markdown: body.innerText.trim(), refs: 0, title: document.title };

  for (const el of Array.from(document.querySelectorAll('[data-mesh-ref]')))
    el.removeAttribute('data-mesh-ref');
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'HEAD', 'IFRAME']);
  const BLOCK = new Set([
    'P', 'DIV', 'SECTION', 'ARTICLE', 'MAIN', 'HEADER', 'FOOTER', 'NAV', 'ASIDE', 'FORM',
    'TABLE', 'TR', 'UL', 'OL', 'DL', 'DT', 'DD', 'BLOCKQUOTE', 'PRE', 'FIELDSET', 'FIGURE', 'BR',
    'HR', 'LABEL',
  ]);
  const ROLES = new Set([
    'button', 'link', 'checkbox', 'radio', 'tab', 'menuitem', 'textbox', 'combobox', 'switch',
    'option', 'searchbox', 'slider',
  ]);
  const lines = [];
  let line = '';
  let refs = 0;
  const clean = (text) => text.replace(/\\s+/g, ' ').trim();
  const flush = () => {
    const text = line.trim();
    if (text !== '') lines.push(text);
    line = '';
  };
  const hidden = (el) => {
    if (el.getAttribute('aria-hidden') === 'true' || el.hidden) return true;
    const style = getComputedStyle(el);
    return style.display === 'none' || style.visibility === 'hidden';
  };
  const roleOf = (el) => {
    const role = el.getAttribute('role');
    if (role && ROLES.has(role)) return role;
    const tag = el.tagName;
    if (tag === 'A' && el.hasAttribute('href')) return 'link';
    if (tag === 'BUTTON' || tag === 'SUMMARY') return 'button';
    if (tag === 'SELECT') return 'combobox';
    if (tag === 'TEXTAREA') return 'textbox';
    if (tag === 'INPUT') {
      const type = (el.type || 'text').toLowerCase();
      if (type === 'hidden') return undefined;
      if (type === 'checkbox' || type === 'radio') return type;
      if (type === 'submit' || type === 'button' || type === 'reset' || type === 'image')
        return 'button';
      return 'textbox';
    }
    if (el.isContentEditable && el.getAttribute('contenteditable') !== null)
      return 'textbox';
    return undefined;
  };
  const nameOf = (el) => {
    const label = el.getAttribute('aria-label');
    if (label) return clean(label);
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const text = by
        .split(/\\s+/)
        .map((id) => document.getElementById(id)?.textContent ?? '')
        .join(' ');
      if (clean(text)) return clean(text);
    }
    const control = el;
    if (control.labels && control.labels.length > 0)
      return clean(Array.from(control.labels).map((l) => l.textContent ?? '').join(' '));
    if (el.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(control.type))
      return clean(control.value || control.type);
    const placeholder = el.getAttribute('placeholder') ?? el.getAttribute('title');
    if (placeholder) return clean(placeholder);
    return clean(el.innerText ?? el.textContent ?? '').slice(0, 100);
  };
  const describe = (el, role) => {
    const ref = \`e\${++refs}\`;
    el.setAttribute('data-mesh-ref', ref);
    const parts = [\`[\${ref}] \${role} "\${nameOf(el).replace(/"/g, "'")}"\`];
    if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
      const input = el;
      if (role === 'checkbox' || role === 'radio') parts.push(input.checked ? 'checked' : 'unchecked');
      else if (role === 'textbox') {
        const type = el.tagName === 'TEXTAREA' ? 'textarea' : input.type || 'text';
        parts.push(\`(\${type}, \${input.value === '' ? 'empty' : 'filled'})\`);
      }
      if (input.disabled) parts.push('disabled');
      if (input.required) parts.push('required');
    } else if (el.tagName === 'SELECT') {
      const select = el;
      const options = Array.from(select.options)
        .slice(0, 30)
        .map((o) => \`\${clean(o.text)}\${o.selected ? ' (selected)' : ''}\`);
      parts.push(\`options: \${options.join(' | ')}\`);
    } else if (role === 'link') {
      const href = el.getAttribute('href') ?? '';
      if (href && !href.startsWith('javascript:')) parts.push(\`→ \${href.slice(0, 200)}\`);
    }
    return parts.join(' ');
  };
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) {
      const text = clean(node.textContent ?? '');
      if (text !== '') line += (line.endsWith(' ') || line === '' ? '' : ' ') + text;
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const el = node;
    if (SKIP.has(el.tagName.toUpperCase()) || hidden(el)) return;
    const role = roleOf(el);
    if (role) {
      flush();
      lines.push(describe(el, role));
      // A control's own text is its name; a link or button with controls inside is walked on.
      if (!el.querySelector('input, select, textarea, button, a[href]')) return;
    }
    const heading = /^H([1-6])$/.exec(el.tagName);
    if (heading) {
      flush();
      lines.push(\`\${'#'.repeat(Number(heading[1]))} \${clean(el.textContent ?? '')}\`);
      return;
    }
    if (el.tagName === 'LI') {
      flush();
      line = '- ';
    } else if (BLOCK.has(el.tagName)) flush();
    if (el.tagName === 'IMG') {
      const alt = el.getAttribute('alt');
      if (alt) line += \` [image: \${clean(alt)}]\`;
    }
    for (const child of Array.from(el.childNodes)) walk(child);
    if (el.tagName === 'LI' || BLOCK.has(el.tagName) || el.tagName === 'TD' || el.tagName === 'TH') {
      if (el.tagName === 'TD' || el.tagName === 'TH') line += ' |';
      else flush();
    }
  };
  walk(body);
  flush();
  return { markdown: lines.filter((l) => l !== '-').join('\\n'), refs, title: document.title };
}`;

/** The expression `page.evaluate` runs for one reading. */
export function readPageExpression(mode: 'text' | 'snapshot'): string {
  return `(${READ_PAGE_FUNCTION})(${JSON.stringify(mode)})`;
}
