import { describe, expect, it } from 'vitest';
import { describeStep } from './run-lines.ts';

describe('mesh runs show', () => {
  it('prints a line per artifact an observation links: kind, media type, size and id', () => {
    const id = '6f1d0c6e-94a4-4f51-a1c7-2d2f0c3c1b7a';
    const lines = describeStep({
      seq: 4,
      kind: 'observation',
      status: 'completed',
      toolName: 'cam__snap',
      callId: 'c1',
      observation: {
        kind: 'result',
        text: `[image image/png, 68 bytes, artifact ${id}]`,
        artifacts: [
          { artifactId: id, kind: 'image', mediaType: 'image/png', sizeBytes: 68 },
          {
            artifactId: id,
            kind: 'resource',
            mediaType: 'application/pdf',
            sizeBytes: 9,
            uri: 'file:///r.pdf',
          },
        ],
      },
    }).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]?.trim()).toBe(`artifact image image/png 68 bytes ${id}`);
    expect(lines[2]?.trim()).toBe(`artifact resource application/pdf 9 bytes ${id} file:///r.pdf`);
  });

  it("prints a request's tool loading on lines of its own: index, both figures, what changed", () => {
    const lines = describeStep({
      seq: 1,
      kind: 'model_request',
      status: 'completed',
      data: {
        round: 2,
        estimate: { total: 900, tools: 600 },
        offered: ['remember', 'tool_search', 'gh__create_pull_request'],
        withheld: [],
        loading: {
          index: true,
          allTokens: 11920,
          indexTokens: 1169,
          shareTokens: 3744,
          loadedTokens: 300,
          loaded: [{ name: 'gh__create_pull_request', query: 'open a PR' }],
          unloaded: [{ name: 'slack__post', reason: 'least recently used' }],
          refused: [{ name: 'gh__merge', reason: 'it is no longer granted to you' }],
        },
      },
    }).split('\n');
    expect(lines.slice(1).map((l) => l.trim())).toEqual([
      'tools: index (every schema 11920 tokens, the index 1169; loaded 300 of 3744)',
      'loaded gh__create_pull_request: searched for "open a PR"',
      'unloaded slack__post: least recently used',
      'refused gh__merge: it is no longer granted to you',
    ]);
  });

  it('marks the last permitted round: its request carries no tools', () => {
    const lines = describeStep({
      seq: 9,
      kind: 'model_request',
      status: 'completed',
      data: { round: 3, estimate: { total: 100 }, offered: [], withheld: [], lastRound: true },
    }).split('\n');
    expect(lines[1]?.trim()).toBe('last round: tools removed');
  });
});
