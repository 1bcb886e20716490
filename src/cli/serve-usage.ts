/*
 * What \`mesh serve\` accepts, apart from its body: the command list prints the usage without
 * loading the server, and the command reads its default port from the same place.
 */

/** The port `mesh serve` listens on unless told otherwise. */
export const DEFAULT_PORT = 8420;

export const SERVE_USAGE = `Usage:
  mesh serve [--port P] [--host H] [--demo] [--new-token]

Serves the web UI and the JSON API (described at /api/openapi.json), and drives runs that
were left unfinished. Prints the URL, and on first start an operator token (shown once; only
its hash is stored).
  --port P       port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --host H       address to bind (default 127.0.0.1)
  --demo         create a demo agent with a scripted model on first run, so it works offline
  --new-token    mint another operator token and print it once`;
