/*
 * Preloaded (`node --import`) into a server this project did not write that listens on every
 * interface and has no host setting: each TCP listen by port is bound to 127.0.0.1 instead, so
 * the server is reachable from this host only. The bound address is printed to stderr; the test
 * waits for that line, which also says the server is up.
 */
import net from 'node:net';

const LOOPBACK = '127.0.0.1';
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
  const [first] = args;
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, callback]): whatever host was given becomes loopback.
    const rest = typeof args[1] === 'string' ? args.slice(2) : args.slice(1);
    args = [first, LOOPBACK, ...rest];
  } else if (typeof first === 'object' && first !== null && 'port' in first) {
    args = [{ ...first, host: LOOPBACK }, ...args.slice(1)];
  }
  this.once('listening', () => {
    const address = this.address();
    if (typeof address === 'object' && address !== null)
      process.stderr.write(`loopback-listen: listening on ${address.address}:${address.port}\n`);
  });
  return listen.apply(this, args);
};
