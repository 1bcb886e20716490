// Types for what test/structure.test.ts reads from eslint.config.js.
export declare const LONG_FUNCTIONS: readonly string[];
declare const config: unknown;
export default config;
