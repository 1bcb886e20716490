import { describe, expect, it } from 'vitest';
import { TOOL_CLASSES, REPLAYS } from './definition.ts';
import { toolEffect } from './effect.ts';

describe('toolEffect', () => {
  it('effectful non-query calls cross the commit boundary and are never re-run', () => {
    for (const cls of ['workspace', 'browser', 'effect'] as const) {
      expect(toolEffect({ class: cls, replay: 'effectful' })).toEqual({
        crossesCommitBoundary: true,
        onResume: 'report_unknown',
      });
    }
  });

  it('internal calls stay inside the boundary', () => {
    expect(toolEffect({ class: 'query', replay: 'internal' }).crossesCommitBoundary).toBe(false);
  });

  it('replayable calls do not cross and are re-run on resume', () => {
    for (const cls of TOOL_CLASSES) {
      expect(toolEffect({ class: cls, replay: 'replayable' })).toEqual({
        crossesCommitBoundary: false,
        onResume: 'reexecute',
      });
    }
  });

  it('an effectful query does not cross, but is not repeated either', () => {
    expect(toolEffect({ class: 'query', replay: 'effectful' })).toEqual({
      crossesCommitBoundary: false,
      onResume: 'report_unknown',
    });
  });

  it('is total over every class and replay', () => {
    for (const cls of TOOL_CLASSES)
      for (const replay of REPLAYS) expect(toolEffect({ class: cls, replay })).toBeDefined();
  });
});
