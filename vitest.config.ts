import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The crash smoke run is among the longest files (real processes killed and restarted); starting it
 * first lets every other file run beside it instead of after it.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const first = (f: TestSpecification) => (f.moduleId.includes('/test/crash/') ? 0 : 1);
    return [...sorted].sort((a, b) => first(a) - first(b));
  }
}

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'tools/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup/seed.ts'],
    sequence: { sequencer: LongestFirst },
    // Vitest would use one worker on a two-core machine; most files wait on processes, sockets and
    // databases rather than the CPU, so two run side by side.
    maxWorkers: 2,
  },
});
