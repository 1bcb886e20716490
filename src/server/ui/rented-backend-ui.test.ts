import { describe, expect, it } from 'vitest';
import { BROWSER_KINDS, WORKSPACE_KINDS } from '../../app/backends/kinds.ts';
import { addBackendForm } from './rented-backend-ui.ts';

describe("a backend family's add form", () => {
  it('offers every declared kind and a field for every declared setting', () => {
    for (const family of [WORKSPACE_KINDS, BROWSER_KINDS]) {
      const form = addBackendForm({ csrf: 'c' }, '/x/backends', family).text;
      for (const kind of family.kinds) expect(form).toContain(`<option value="${kind.name}">`);
      for (const s of family.settings) expect(form).toContain(`name="${s.field}"`);
      expect(form).toContain('name="api_key" type="password"');
    }
  });

  it('keeps what a refused post held, except the key', () => {
    const session = {
      csrf: 'c',
      flash: { kind: 'error' as const, text: 'no', kept: { name: 'bb', project_id: 'p-1' } },
    };
    const form = addBackendForm(session, '/browsers/backends', BROWSER_KINDS).text;
    expect(form).toContain('name="name" value="bb"');
    expect(form).toContain('name="project_id" value="p-1"');
  });
});
