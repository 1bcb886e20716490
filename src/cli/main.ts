import { meshVersion } from '../app/version.ts';
import { isRetryableCode } from '../tool/error-codes.ts';
import { isMeshError } from '../tool/errors.ts';
import { quietSdkLogs } from '../app/sdk-logs.ts';
import { startTelemetry } from '../app/telemetry.ts';
import { processIo, UsageError, type CliIo } from './command.ts';
import { commands } from './commands.ts';

function help(): string {
  const width = Math.max(8, ...commands.map((c) => c.name.length));
  const lines = [
    'mesh: the tool layer of a cloud-first agent platform',
    '',
    'Usage: mesh <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    `  ${'help'.padEnd(width)}  Show this help, or a command's usage (mesh help <command>)`,
    `  ${'version'.padEnd(width)}  Print the version`,
    '',
    'Configuration: MESH_HOME (default ./.mesh) holds the embedded database and the instance key;',
    'DATABASE_URL selects a PostgreSQL server instead; MESH_INSTANCE_KEY_FILE names an operator-provided',
    'instance key. Everything else lives in the database.',
  ];
  return lines.join('\n');
}

/** Runs the `mesh` command line and returns the exit code. */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  quietSdkLogs();
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const target = name === 'help' ? commands.find((c) => c.name === rest[0]) : undefined;
    io.out(target ? target.usage : help());
    return 0;
  }
  if (name === 'version' || name === '--version' || name === '-v') {
    io.out(meshVersion());
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`mesh: unknown command ${JSON.stringify(name)}\n\n${help()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(command.usage);
    return 0;
  }
  // Before the body loads, so the provider is there for its first span; flushed when it ends.
  const telemetry = command.traced ? await startTelemetry(meshVersion()) : undefined;
  try {
    return await (
      await command.load()
    )(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`mesh ${command.name}: ${error.message}\n\n${command.usage}`);
      return 2;
    }
    // An unknown option or a missing value, as node:util's parseArgs refuses it.
    if (isParseArgsError(error)) {
      io.err(`mesh ${command.name}: ${error.message.split('. ')[0]}\n\n${command.usage}`);
      return 2;
    }
    // Mesh's own errors are written for operators: print the message, not a stack.
    if (isMeshError(error)) {
      const later = isRetryableCode(error.code) ? ' (this may pass: try again shortly)' : '';
      io.err(`mesh ${command.name}: ${error.message}${later}`);
      return 1;
    }
    throw error;
  } finally {
    await telemetry?.shutdown();
  }
}

/** An argument refusal thrown by node:util's `parseArgs` (`ERR_PARSE_ARGS_*`). */
function isParseArgsError(error: unknown): error is Error & { code: string } {
  if (!(error instanceof TypeError)) return false;
  const code = (error as unknown as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}
