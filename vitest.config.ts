import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest files (real processes killed and restarted, CLI runs, a browser, property runs over
 * every route, production leases waited out), longest first, start before the rest, so the short
 * ones fill in beside them instead of the suite ending on one long file running alone.
 */
const LONGEST = [
  '/test/cli/cli.test.ts',
  '/test/cli/github-flow.test.ts',
  '/test/server/hostile-input.test.ts',
  '/test/crash/',
  '/test/run/interrupted-runs.test.ts',
  '/test/interop/',
  '/test/browser/',
  '/test/cli/failover.test.ts',
  '/test/cli/serve.test.ts',
  '/test/github/checkout-workspace.test.ts',
  '/test/cli/web-flow.test.ts',
  '/test/run/worker.test.ts',
  '/test/mcp/remote-mcp.test.ts',
  '/test/cli/progressive-chat.test.ts',
  '/test/cli/linear-slack-flow.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONGEST.findIndex((part) => f.moduleId.includes(part));
      return i < 0 ? LONGEST.length : i;
    };
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

/**
 * Files that start real processes (`mesh` commands and servers, reference MCP servers, git,
 * bubblewrap sandboxes, a browser): each runs in a fresh module graph of its own, so a child
 * process, a signal handler or an environment change one of them leaves cannot reach another file.
 */
const SPAWNING = [
  'test/cli/**/*.test.ts',
  'test/crash/**/*.test.ts',
  'test/run/interrupted-runs.test.ts',
  'test/lifecycle/lifecycle-crash.test.ts',
  'test/interop/**/*.test.ts',
  'test/browser/**/*.test.ts',
  'test/exec/local-isolation.test.ts',
  'test/github/fakes.test.ts',
  'test/secrets/instance-key-file.test.ts',
  'test/store/home-lock.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits for a state (a page's attribute, a row) and returns as soon as it holds;
    // its default of 1 s was lost beside four busy loops (Live View's first frame, issue 50).
    expect: { poll: { timeout: 15_000 } },
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup/seed.ts'],
    sequence: { sequencer: LongestFirst },
    // Vitest would use one worker on a two-core machine; most files wait on processes, sockets and
    // databases rather than the CPU, so three run side by side.
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        test: {
          name: 'in-process',
          include: ['src/**/*.test.ts', 'tools/**/*.test.ts', 'test/**/*.test.ts'],
          // Vitest's own excludes (node_modules: test/conformance keeps its own) and the spawners.
          exclude: [...configDefaults.exclude, ...SPAWNING],
          // Files share a worker's module graph instead of each importing all of src/ again (the
          // import took ~110 s of the suite's CPU). Tests keep no module state and restore what
          // they change (process.env, spies); the product keeps none by rule (state lives on the
          // Mesh object).
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'processes',
          include: SPAWNING,
          exclude: configDefaults.exclude,
          isolate: true,
        },
      },
    ],
  },
});
