/** Paths of a local OAuth2 server's endpoints: GitHub's, so the dev server looks like a social provider. */
export const AUTHORIZE_PATH = '/login/oauth/authorize'
export const TOKEN_PATH = '/login/oauth/access_token'
export const USERINFO_PATH = '/user'

/** Endpoint URLs of a server at `baseUrl` (no trailing slash). */
export function serverEndpoints (baseUrl: string): { authURL: string; tokenURL: string; infoURL: string } {
  const base = baseUrl.replace(/\/+$/, '')
  return { authURL: base + AUTHORIZE_PATH, tokenURL: base + TOKEN_PATH, infoURL: base + USERINFO_PATH }
}
