// The in-sandbox agent of the local backend. It runs inside bubblewrap as the workspace's first
// process, with Node's own modules only, and is the sole way the control plane reaches in:
//  - requests arrive on a Unix socket in /run/mesh (one request per connection, JSON lines);
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
const CONTROL = '/run/mesh/control.sock';
const EGRESS = '/run/mesh/egress.sock';
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

function send(socket, message) {
  socket.write(`${JSON.stringify(message)}\n`);
}

function exec(socket, request) {
  const cwd = resolveInside(request.cwd ?? '.', true);
  if (cwd.error) {
    send(socket, { t: 'error', reason: cwd.error, message: `cwd: ${cwd.message}` });
    socket.end();
    return;
  }
  const started = process.hrtime.bigint();
  // Limits through the shell's ulimit, so they apply to the command and all it starts.
  const prelude = [
    limits.fileSizeMb ? `ulimit -f ${limits.fileSizeMb * 2048}` : '',
    limits.memoryMb ? `ulimit -v ${limits.memoryMb * 1024 * 4}` : '',
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
  child.stdout.on('data', (d) => send(socket, { t: 'out', s: 1, d: d.toString('base64') }));
  child.stderr.on('data', (d) => send(socket, { t: 'out', s: 2, d: d.toString('base64') }));
  child.on('error', (error) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    send(socket, { t: 'error', reason: 'io', message: `could not start the shell: ${error.code}` });
    socket.end();
  });
  child.on('close', (code, signal) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    send(socket, { t: 'exit', code, signal, timedOut, ms });
    socket.end();
  });
  // The control plane hanging up is a cancel: the command's whole group goes.
  socket.on('close', () => {
    if (!done) kill();
  });
}

function readFile(socket, request) {
  const target = resolveInside(request.path, true);
  if (target.error)
    return send(socket, { t: 'error', reason: target.error, message: target.message });
  let stat;
  try {
    stat = statSync(target.path);
  } catch {
    return send(socket, {
      t: 'error',
      reason: 'not_found',
      message: 'no such file in the workspace',
    });
  }
  if (!stat.isFile())
    return send(socket, {
      t: 'error',
      reason: 'not_a_file',
      message: 'the path is not a regular file',
    });
  if (stat.size > request.maxBytes)
    return send(socket, {
      t: 'error',
      reason: 'too_large',
      message: `the file is ${stat.size} bytes, over the ${request.maxBytes}-byte limit`,
    });
  send(socket, { t: 'file', d: readFileSync(target.path).toString('base64') });
}

function writeFile(socket, request) {
  const target = resolveInside(request.path, false);
  if (target.error)
    return send(socket, { t: 'error', reason: target.error, message: target.message });
  try {
    mkdirSync(dirname(target.path), { recursive: true });
    // Re-check after making folders: a parent that is a symlink must not lead out.
    const again = resolveInside(request.path, false);
    if (again.error)
      return send(socket, { t: 'error', reason: again.error, message: again.message });
    writeFileSync(target.path, Buffer.from(request.d, 'base64'));
    send(socket, { t: 'ok' });
  } catch (error) {
    const reason = error.code === 'EISDIR' ? 'not_a_file' : 'io';
    send(socket, { t: 'error', reason, message: `could not write the file (${error.code})` });
  }
}

const control = createServer((socket) => {
  let buffered = '';
  const onData = (chunk) => {
    buffered += chunk.toString('utf8');
    const newline = buffered.indexOf('\n');
    if (newline < 0) return;
    socket.off('data', onData);
    let request;
    try {
      request = JSON.parse(buffered.slice(0, newline));
    } catch {
      send(socket, { t: 'error', reason: 'io', message: 'malformed request' });
      socket.end();
      return;
    }
    if (request.op === 'exec') return exec(socket, request);
    if (request.op === 'read') readFile(socket, request);
    else if (request.op === 'write') writeFile(socket, request);
    else send(socket, { t: 'error', reason: 'io', message: 'unknown operation' });
    socket.end();
  };
  socket.on('data', onData);
  socket.on('error', () => undefined);
});

// The one way out: every connection to the in-sandbox proxy port is carried to the control
// plane's egress proxy, which allows the workspace's allowlisted hosts and nothing else.
const egress = createServer((inside) => {
  const outside = createConnection(EGRESS);
  inside.pipe(outside).pipe(inside);
  inside.on('error', () => outside.destroy());
  outside.on('error', () => inside.destroy());
});

egress.listen(PROXY_PORT, '127.0.0.1', () => {
  control.listen(CONTROL, () => process.stdout.write('ready\n'));
});
