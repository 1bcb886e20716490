import { describe, expect, it } from 'vitest';
import { artifactId, observation, type Observation } from './observation.ts';

describe('observation', () => {
  it('builds a frozen observation', () => {
    const o = observation({ kind: 'result', text: 'hi', data: { a: 1 } });
    expect(o).toEqual({ kind: 'result', text: 'hi', data: { a: 1 } });
    expect(Object.isFrozen(o)).toBe(true);
  });

  it('keeps a truncation that names its artifact', () => {
    const o = observation({
      kind: 'result',
      text: 'head…tail',
      truncated: { artifactId: artifactId('art-1'), totalBytes: 100_000, shownBytes: 4096 },
    });
    expect(o.truncated?.artifactId).toBe('art-1');
  });

  it('cannot be truncated without an artifact id, at runtime', () => {
    const bad = {
      kind: 'result',
      text: 'x',
      truncated: { totalBytes: 10, shownBytes: 1 },
    } as unknown as Observation;
    expect(() => observation(bad)).toThrow(/artifact/);
    const empty = {
      kind: 'result',
      text: 'x',
      truncated: { artifactId: ' ', totalBytes: 10, shownBytes: 1 },
    } as unknown as Observation;
    expect(() => observation(empty)).toThrow(/artifact/);
    expect(() => artifactId('')).toThrow();
  });

  it('cannot be truncated without an artifact id, at the type level', () => {
    const build = () =>
      observation({
        kind: 'result',
        text: 'x',
        // @ts-expect-error a plain string is not an ArtifactId
        truncated: { artifactId: 'art-1', totalBytes: 10, shownBytes: 1 },
      });
    const missing = () =>
      observation({
        kind: 'result',
        text: 'x',
        // @ts-expect-error the artifact id is required
        truncated: { totalBytes: 10, shownBytes: 1 },
      });
    expect(build).not.toThrow();
    expect(missing).toThrow();
  });

  it('refuses an impossible byte count', () => {
    expect(() =>
      observation({
        kind: 'result',
        text: 'x',
        truncated: { artifactId: artifactId('a'), totalBytes: 1, shownBytes: 5 },
      }),
    ).toThrow(/shownBytes/);
  });
});
