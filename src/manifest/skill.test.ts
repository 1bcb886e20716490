import { describe, expect, it } from 'vitest';
import { DiagnosticSink } from './diagnostic.ts';
import { parseSkill } from './skill.ts';

function parse(text: string) {
  const sink = new DiagnosticSink('tools/pkg/SKILL.md', 'test.pkg');
  return { skill: parseSkill(text, sink), diagnostics: sink.list };
}

describe('parseSkill', () => {
  it('reads name, description and body from the AgentSkills shape', () => {
    const { skill, diagnostics } = parse(
      '---\r\nname: issue-triage\r\ndescription: >\r\n  How to triage\r\n  issues.\r\nlicense: MIT\r\nmetadata:\r\n  owner: tools\r\n---\r\n\r\n# Triage\r\n\r\nUse `search`.\r\n',
    );
    expect(diagnostics).toEqual([]);
    expect(skill).toEqual({
      name: 'issue-triage',
      description: 'How to triage issues.',
      body: '# Triage\n\nUse `search`.',
    });
  });

  it.each([
    ['no front matter', '# Just markdown\n', 'front_matter'],
    ['malformed YAML', '---\nname: a\ndescription: [oops\n---\nbody\n', 'front_matter'],
    ['duplicate keys', '---\nname: a\nname: b\ndescription: d\n---\nbody\n', 'front_matter'],
    ['a list as front matter', '---\n- a\n- b\n---\nbody\n', 'front_matter'],
    ['a missing name', '---\ndescription: d\n---\nbody\n', 'front_matter.name'],
    [
      'a name that is not lowercase words',
      '---\nname: Issue Triage\ndescription: d\n---\nbody\n',
      'front_matter.name',
    ],
    ['a missing description', '---\nname: a\n---\nbody\n', 'front_matter.description'],
    [
      'an unknown field',
      '---\nname: a\ndescription: d\nallowed-tools: Bash\n---\nbody\n',
      'front_matter.allowed-tools',
    ],
    [
      'metadata that is not a string map',
      '---\nname: a\ndescription: d\nmetadata:\n  n: 1\n---\nbody\n',
      'front_matter.metadata',
    ],
    ['an empty body', '---\nname: a\ndescription: d\n---\n\n', 'body'],
  ])('refuses %s', (_label, text, field) => {
    const { skill, diagnostics } = parse(text);
    expect(skill).toBeUndefined();
    expect(diagnostics.map((d) => [d.code, d.field])).toContainEqual(['skill_invalid', field]);
    expect(
      diagnostics.every((d) => d.file === 'tools/pkg/SKILL.md' && d.package === 'test.pkg'),
    ).toBe(true);
  });

  it('reports the line of a YAML error without echoing the file', () => {
    const { diagnostics } = parse(
      '---\nname: a\ndescription: "unterminated sk-live-999\n---\nbody\n',
    );
    expect(diagnostics[0]?.line).toBeGreaterThan(1);
    expect(JSON.stringify(diagnostics)).not.toContain('sk-live-999');
  });

  it('refuses a skill over the size cap before parsing it', () => {
    const { diagnostics } = parse(`---\nname: a\ndescription: d\n---\n${'x'.repeat(70_000)}`);
    expect(diagnostics.map((d) => d.code)).toEqual(['skill_too_large']);
  });
});
