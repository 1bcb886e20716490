import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small website on loopback for the browser tools: a home page with a link, a contact form
 * that posts back and thanks by name, and a login wall. It records what it was sent, so a test
 * can check what reached it (and what did not reach anything else).
 */
export interface TestSite {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  /** Form posts received, decoded. */
  readonly posts: readonly Record<string, string>[];
  /** Paths requested, in order. */
  readonly paths: readonly string[];
  close(): Promise<void>;
}

const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

export async function startTestSite(): Promise<TestSite> {
  const posts: Record<string, string>[] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    void handle(req).then(
      ({ status, html, headers }) => {
        res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
        res.end(html);
      },
      () => res.destroy(),
    );
  });

  async function handle(
    req: IncomingMessage,
  ): Promise<{ status: number; html: string; headers?: Record<string, string> }> {
    const url = new URL(req.url ?? '/', 'http://site');
    paths.push(url.pathname);
    if (req.method === 'POST') {
      const body = await new Promise<string>((resolve) => {
        let text = '';
        req.on('data', (c: Buffer) => (text += c.toString('utf8')));
        req.on('end', () => resolve(text));
      });
      const form = Object.fromEntries(new URLSearchParams(body));
      posts.push(form);
      if (url.pathname === '/contact')
        return {
          status: 200,
          html: page(
            'Thanks',
            `<h1>Thanks, ${escape(form['name'] ?? '')}!</h1><p>Your ${escape(form['topic'] ?? '')} request is number 4127.</p>`,
          ),
        };
      if (url.pathname === '/login') {
        const ok = form['user'] === 'grace' && form['password'] === 'correct horse';
        return ok
          ? {
              status: 303,
              html: '',
              headers: { location: '/account', 'set-cookie': 'session=ok; Path=/' },
            }
          : { status: 401, html: page('Sign in', '<p>Wrong password.</p>') };
      }
    }
    switch (url.pathname) {
      // A sign-in form that sends its fields in the URL (method get), as careless sites do.
      case '/legacy-signin':
        return {
          status: 200,
          html: page(
            'Legacy sign-in',
            `<form method="get" action="/legacy-account">
               <label>User <input name="user" value="grace"></label>
               <label>Password <input type="password" name="password" value="correct-horse-42"></label>
               <input type="hidden" name="token" value="csrf-tok-9f8e7d6c">
               <button type="submit">Sign in</button>
             </form>`,
          ),
        };
      case '/legacy-account':
        return { status: 200, html: page('Legacy account', '<p>Signed in.</p>') };
      case '/':
        return {
          status: 200,
          html: page(
            'Acme Support',
            `<header><h1>Acme Support</h1></header>
             <p>We answer within a day. Opening hours: 9 to 5.</p>
             <ul><li>Billing</li><li>Shipping</li></ul>
             <a href="/contact">Contact us</a>
             <div style="display:none">hidden text</div>`,
          ),
        };
      case '/contact':
        return {
          status: 200,
          html: page(
            'Contact',
            `<h1>Contact</h1>
             <form method="post" action="/contact">
               <label for="name">Your name</label> <input id="name" name="name" required>
               <label>Topic <select name="topic"><option value="billing">Billing</option><option value="shipping">Shipping</option></select></label>
               <label><input type="checkbox" name="urgent" value="yes"> Urgent</label>
               <button type="submit">Send</button>
             </form>`,
          ),
        };
      case '/account': {
        const signedIn = /session=ok/.test(req.headers.cookie ?? '');
        return signedIn
          ? {
              status: 200,
              html: page('Account', '<h1>Your account</h1><p>Balance: 42 credits.</p>'),
            }
          : { status: 303, html: '', headers: { location: '/login' } };
      }
      case '/login':
        return {
          status: 200,
          html: page(
            'Sign in',
            `<h1>Sign in</h1>
             <form method="post" action="/login">
               <label>User <input name="user"></label>
               <label>Password <input type="password" name="password"></label>
               <button type="submit">Sign in</button>
             </form>`,
          ),
        };
      default:
        return { status: 404, html: page('Not found', '<p>No such page.</p>') };
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    posts,
    paths,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
