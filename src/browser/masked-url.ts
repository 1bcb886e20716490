/**
 * Query parameters whose values are credentials: a GET form with a password field puts it in the
 * URL, and an OAuth or signed link carries a token there. Matched by name, in any case.
 */
const SECRET_PARAM =
  /^(?:pass(?:word|wd|code)?|pw|pwd|pin|secret|client_secret|token|access_token|id_token|refresh_token|auth|authorization|api_?key|apikey|key|sig|signature|session|sessionid|sid)$/i;

/** What a masked value is shown as. */
const MASK = '****';

/**
 * A page's URL as Mesh shows and keeps it (navigation results, reads, recordings): the values of
 * credential-named query parameters and a password in the userinfo masked. A URL that does not
 * parse is shown as it is (there is nothing to find in it by name).
 */
export function maskedUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  let changed = false;
  if (url.password !== '') {
    url.password = MASK;
    changed = true;
  }
  if (url.search !== '') {
    const params = new URLSearchParams(url.search);
    for (const name of new Set(params.keys()))
      if (SECRET_PARAM.test(name) && params.getAll(name).some((v) => v !== '')) {
        // In place of the first; a repeated one is shown once.
        params.set(name, MASK);
        changed = true;
      }
    if (changed) url.search = params.toString().replaceAll('%2A', '*');
  }
  return changed ? url.toString() : raw;
}
