import { html } from './html.ts';
import { layout, type PageSession } from './layout.ts';

/** The login form: an operator token opens a session. */
export function loginPage(error?: string): string {
  return layout(
    'Log in',
    undefined,
    html`<section class="login">
      <h1>Log in</h1>
      <p>
        Paste an operator token. One was printed when this Mesh first started;
        <code>mesh tokens create</code> makes another.
      </p>
      ${error ? html`<p class="flash error" role="alert">${error}</p>` : ''}
      <form method="post" action="/login">
        <label
          >Operator token <input type="password" name="token" autocomplete="off" required autofocus
        /></label>
        <button>Log in</button>
      </form>
    </section>`,
  );
}

/** A refusal or failure as a page; its message is value-free. */
export function errorPage(
  session: PageSession | undefined,
  status: number,
  message: string,
): string {
  return layout(
    `Error ${status}`,
    session,
    html`<h1>${status === 404 ? 'Not found' : 'Something went wrong'}</h1>
      <p>${message}</p>
      <p><a href="/agents">Back to agents</a></p>`,
  );
}
