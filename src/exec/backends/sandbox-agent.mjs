// The in-sandbox agent of the local backend. It runs inside bubblewrap as the workspace's first
// process, with Node's own modules only, and is the sole way the control plane reaches in:
//  - requests arrive on its standard input and answers leave on its standard output, JSON lines
//    keyed by the request's id: pipes, not a file in the sandbox, so no command can replace the
//    channel (commands start with neither pipe);
//  - commands run as `/bin/sh -c` in their own process group, output streamed back;
//  - files are read and written here, inside the sandbox's view, so a symlink in the workspace
//    resolves against the sandbox's filesystem, never the host's;
//  - the sandbox has no network but its own loopback: 127.0.0.1:3128 inside is forwarded to the
//    control plane's egress proxy socket, the one way out.
// Plain JavaScript on purpose: it is executed by /usr/bin/node inside the sandbox, untranspiled.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { dirname, posix } from 'node:path';

const ROOT = '/workspace';
const EGRESS = '/run/mesh/egress.sock';
/** The longest request line read: a file write's base64 fits, anything longer is refused. */
const MAX_REQUEST_CHARS = 96 * 1024 * 1024;
const PROXY_PORT = 3128;
const limits = JSON.parse(process.argv[2] ?? '{}');

/** The workspace path a request names, or an error reason: never outside ROOT. */
function resolveInside(path, mustExist) {
  if (typeof path !== 'string' || path.length === 0 || path.includes('\0'))
    return { error: 'outside_root', message: 'the path is empty or malformed' };
  const absolute = posix.normalize(path.startsWith('/') ? path : posix.join(ROOT, path));
  if (absolute !== ROOT && !absolute.startsWith(`${ROOT}/`))
    return { error: 'outside_root', message: `the path leaves the workspace root ${ROOT}` };
  // Symlinks: the real path of the deepest existing ancestor must stay inside too.
  let probe = absolute;
  for (;;) {
    try {
      const real = realpathSync(probe);
      if (real !== ROOT && !real.startsWith(`${ROOT}/`))
        return { error: 'outside_root', message: 'the path resolves outside the workspace root' };
      break;
    } catch {
      if (mustExist && probe === absolute)
        return { error: 'not_found', message: 'no such file in the workspace' };
      probe = posix.dirname(probe);
    }
  }
  return { path: absolute };
}

/** One request's answers: every line carries its id; `end` says no more will come. */
function replier(id) {
  let ended = false;
  return {
    send(message) {
      if (!ended) process.stdout.write(`${JSON.stringify({ id, ...message })}\n`);
    },
    end() {
      ended = true;
    },
    get ended() {
      return ended;
    },
  };
}

/** Cancels of running commands, by request id. */
const running = new Map();

function exec(reply, request) {
  const cwd = resolveInside(request.cwd ?? '.', true);
  if (cwd.error) {
    reply.send({ t: 'error', reason: cwd.error, message: `cwd: ${cwd.message}` });
    reply.end();
    return;
  }
  const started = process.hrtime.bigint();
  // Limits through the shell's ulimit, so they apply to the command and all it starts.
  const prelude = [
    limits.fileSizeMb ? `ulimit -f ${limits.fileSizeMb * 2048}` : '',
    limits.memoryMb ? `ulimit -v ${limits.memoryMb * 1024 * 4}` : '',
    limits.processes ? `ulimit -p ${limits.processes}` : '',
  ]
    .filter(Boolean)
    .join('; ');
  const child = spawn('/bin/sh', ['-c', `${prelude}; exec /bin/sh -c "$0"`, request.command], {
    cwd: cwd.path,
    env: { ...request.env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let timedOut = false;
  let done = false;
  const kill = () => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, request.timeoutMs);
  child.stdout.on('data', (d) => reply.send({ t: 'out', s: 1, d: d.toString('base64') }));
  child.stderr.on('data', (d) => reply.send({ t: 'out', s: 2, d: d.toString('base64') }));
  child.on('error', (error) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    running.delete(request.id);
    reply.send({ t: 'error', reason: 'io', message: `could not start the shell: ${error.code}` });
    reply.end();
  });
  child.on('close', (code, signal) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    running.delete(request.id);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    reply.send({ t: 'exit', code, signal, timedOut, ms });
    reply.end();
  });
  // A cancel from the control plane: the command's whole group goes.
  running.set(request.id, () => {
    if (!done) kill();
  });
}

function readFile(reply, request) {
  const target = resolveInside(request.path, true);
  if (target.error)
    return reply.send({ t: 'error', reason: target.error, message: target.message });
  let stat;
  try {
    stat = statSync(target.path);
  } catch {
    return reply.send({
      t: 'error',
      reason: 'not_found',
      message: 'no such file in the workspace',
    });
  }
  if (!stat.isFile())
    return reply.send({
      t: 'error',
      reason: 'not_a_file',
      message: 'the path is not a regular file',
    });
  if (stat.size > request.maxBytes)
    return reply.send({
      t: 'error',
      reason: 'too_large',
      message: `the file is ${stat.size} bytes, over the ${request.maxBytes}-byte limit`,
    });
  reply.send({ t: 'file', d: readFileSync(target.path).toString('base64') });
}

function writeFile(reply, request) {
  const target = resolveInside(request.path, false);
  if (target.error)
    return reply.send({ t: 'error', reason: target.error, message: target.message });
  try {
    mkdirSync(dirname(target.path), { recursive: true });
    // Re-check after making folders: a parent that is a symlink must not lead out.
    const again = resolveInside(request.path, false);
    if (again.error) return reply.send({ t: 'error', reason: again.error, message: again.message });
    writeFileSync(target.path, Buffer.from(request.d, 'base64'));
    reply.send({ t: 'ok' });
  } catch (error) {
    const reason = error.code === 'EISDIR' ? 'not_a_file' : 'io';
    reply.send({ t: 'error', reason, message: `could not write the file (${error.code})` });
  }
}

/** Runs one request line: an operation, or the cancel of a running command. */
function dispatch(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return;
  }
  if (typeof request !== 'object' || request === null || !Number.isSafeInteger(request.id)) return;
  if (request.op === 'cancel') return running.get(request.id)?.();
  const reply = replier(request.id);
  if (request.op === 'exec') return exec(reply, request);
  if (request.op === 'read') readFile(reply, request);
  else if (request.op === 'write') writeFile(reply, request);
  else reply.send({ t: 'error', reason: 'io', message: 'unknown operation' });
  reply.end();
}

let buffered = '';
process.stdin.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let newline;
  while ((newline = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    if (line) dispatch(line);
  }
  if (buffered.length > MAX_REQUEST_CHARS) buffered = '';
});
// The control plane gone: nothing is left to serve.
process.stdin.on('end', () => process.exit(0));

// The one way out: every connection to the in-sandbox proxy port is carried to the control
// plane's egress proxy, which allows the workspace's allowlisted hosts and nothing else.
const egress = createServer((inside) => {
  const outside = createConnection(EGRESS);
  inside.pipe(outside).pipe(inside);
  inside.on('error', () => outside.destroy());
  outside.on('error', () => inside.destroy());
});

egress.listen(PROXY_PORT, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ t: 'ready' })}\n`);
});
