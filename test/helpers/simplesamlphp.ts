/**
 * Test helper: a SimpleSAMLphp IdP for a test file (example/simplesamlphp.ts starts it), stopped in the file's
 * teardown, and its sign-in walked without a browser (the redirect, its own login page's form, the auto-posting
 * form with the SAMLResponse), for the tests that tamper with real responses. When SimpleSAMLphp is not installed,
 * `simpleSamlSkip` says why and the file's tests are skipped with that reason.
 */
import { simpleSamlMissing, startSimpleSaml, type RunningSimpleSaml, type SimpleSamlOptions } from '../../example/simplesamlphp.js'

export { simpleSamlMissing }

/** Why the SimpleSAMLphp tests cannot run here (printed as the skip reason), or undefined. */
export function simpleSamlSkip (): string | undefined {
  const missing = simpleSamlMissing()
  if (missing !== undefined) console.log(`# SimpleSAMLphp tests skipped: ${missing}`)
  return missing
}

/** Starts an IdP stopped by `t`'s teardown; answers it with how long it took to accept connections. */
export async function simpleSaml (t: { teardown(fn: () => unknown): void }, opts: SimpleSamlOptions): Promise<RunningSimpleSaml & { startMs: number }> {
  const started = performance.now()
  const idp = await startSimpleSaml(opts)
  const startMs = performance.now() - started
  t.teardown(() => idp.stop())
  return { ...idp, startMs }
}

/** The users of the tests' IdPs. */
export const USERS = {
  alice: { password: 'alice-pass', attributes: { uid: ['alice'], mail: ['alice@acme.test'], displayName: ['Alice Liddell'], groups: ['admins', 'staff'] } },
  bob: { password: 'bob-pass', attributes: { uid: ['bob'], mail: ['bob@acme.test'], cn: ['Bob Builder'] } }
}

/** A cookie jar for one host, enough for SimpleSAMLphp's session cookies. */
class Jar {
  readonly values = new Map<string, string>()
  take (r: Response): void {
    for (const line of r.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const i = pair!.indexOf('=')
      this.values.set(pair!.slice(0, i), pair!.slice(i + 1))
    }
  }

  header (): string { return [...this.values].map(([k, v]) => `${k}=${v}`).join('; ') }
}

/** An HTML attribute value as the page wrote it, unescaped. */
function unescape (s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#039;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
}

/**
 * Walks SimpleSAMLphp's sign-in from the SP's redirect `location` with `user`'s password, as a browser would, and
 * answers the SAMLResponse its auto-posting form carries (and the form's action). Throws with the page's own text
 * when SimpleSAMLphp answered an error page (it answers those with status 200).
 */
export async function idpSignIn (location: string, user: string, password: string): Promise<{ samlResponse: string; action: string }> {
  const jar = new Jar()
  let url = location
  let r: Response
  for (;;) {
    r = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } })
    jar.take(r)
    if (r.status < 300 || r.status >= 400) break
    url = new URL(r.headers.get('location')!, url).href
  }
  let page = await r.text()
  const authState = /name="AuthState" value="([^"]+)"/.exec(page)?.[1]
  if (authState === undefined) throw new Error(`no login form at the IdP: ${pageText(page)}`)
  r = await fetch(url.split('?')[0]!, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: user, password, AuthState: unescape(authState) }).toString()
  })
  jar.take(r)
  page = await r.text()
  const samlResponse = /name="SAMLResponse" value="([^"]+)"/.exec(page)?.[1]
  const action = /<form[^>]+action="([^"]+)"/.exec(page)?.[1]
  if (samlResponse === undefined || action === undefined) throw new Error(`no SAMLResponse from the IdP: ${pageText(page)}`)
  return { samlResponse: unescape(samlResponse), action: unescape(action) }
}

/** The visible text of an HTML page, shortened: what SimpleSAMLphp's error pages say. */
export function pageText (html: string): string {
  return html.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, ' ').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 600)
}
