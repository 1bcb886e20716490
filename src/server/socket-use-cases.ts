import type { Context, Hono } from 'hono';
import { deserialize, serialize } from 'node:v8';
import { USE_CASE_MEDIA_TYPE, USE_CASE_PATH } from '../app/cli-socket.ts';
import type { Mesh } from '../app/mesh.ts';
import { isMeshError } from '../tool/errors.ts';
import { HttpError } from './http-error.ts';
import { readBody } from './http.ts';
import { routeNotFound } from './router.ts';
import type { ServerEnv } from './server-env.ts';

/*
 * The CLI's use cases that are not yet operations of the catalog, reached over the socket's HTTP
 * server at POST /cli/use-cases/{name}: the input and the output are node:v8 serializations (the
 * CLI prints their Dates), a refusal is the API's JSON error with its status. Served only on the
 * owner-only socket, never over TCP; each use case leaves this route when it joins the catalog.
 */

/** No input of the CLI's comes near this (a persona, a script, a secret read from a file). */
const MAX_USE_CASE_BODY = 16 * 1024 * 1024;

async function readInput(c: Context<ServerEnv, string>): Promise<object> {
  const bytes = await readBody(
    c,
    MAX_USE_CASE_BODY,
    USE_CASE_MEDIA_TYPE,
    `send the input as ${USE_CASE_MEDIA_TYPE}`,
    (req) => req.arrayBuffer(),
  );
  let input: unknown;
  try {
    input = deserialize(Buffer.from(bytes));
  } catch {
    input = undefined;
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new HttpError(
      'invalid_body',
      'the body is not a serialized input object',
      {},
      {
        field: 'body',
      },
    );
  return input;
}

/** Mounts the use-case route on the socket's app. */
export function mountUseCases(app: Hono<ServerEnv>, mesh: Mesh): void {
  app.post(`${USE_CASE_PATH}:name`, async (c) => {
    const { runUseCase, isUseCaseName } = await import('../app/use-cases.ts');
    const name = c.req.param('name');
    if (!isUseCaseName(name)) throw routeNotFound();
    const input = await readInput(c);
    let output: unknown;
    try {
      output = await runUseCase(mesh, name, input as never);
    } catch (error) {
      if (isMeshError(error)) throw error;
      // Logged by its name only: the input may hold a secret the CLI read from a file, and a
      // runtime's message may quote it.
      throw new Error(
        `use case ${name} failed (${error instanceof Error ? error.name : 'a non-error was thrown'})`,
        { cause: error },
      );
    }
    return c.body(new Uint8Array(serialize({ output })), 200, {
      'content-type': USE_CASE_MEDIA_TYPE,
    });
  });
}
