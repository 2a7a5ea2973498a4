/**
 * Checks run when the server becomes ready (the core plugin's `onReady`), for option mistakes that would
 * otherwise surface only on the first request: a secret reader that answers nothing (an unset environment
 * variable) or a short secret, cookie and header names no client can send back, redirect hosts written as
 * URLs. Each fails `app.ready()` (and so `app.listen()`) with an `OptionsError` naming the option. Settings
 * that are legal but weaken protection are logged as warnings instead.
 */
import { OptionsError } from '../../../lib/errors.js'
import type { ResolvedOptions } from './types.js'

/** Fewest bytes of a session secret: 256 bits, the HS256 key size (RFC 7518 §3.2 asks for at least that). */
export const MIN_SECRET_BYTES = 32
/** The advice every secret error ends with. */
export const MAKE_SECRET = 'make one with `openssl rand -base64 48`'

/** What the startup checks read of the options. */
type StartupOptions = Pick<ResolvedOptions, 'allowedRedirectHosts' | 'audiences' | 'cookies' | 'logger' | 'secret' | 'tokenSources' | 'url' | 'xsrf'>

/** Runs every check; rejects with the first `OptionsError`. */
export async function checkAtStartup (o: StartupOptions): Promise<void> {
  await checkSecrets(o)
  checkNames(o)
  warnWeakSettings(o)
}

/**
 * Asks the secret reader for each configured audience, or for the default one (`''`) when none are configured:
 * the audiences a token can be issued for must each have a secret of at least `MIN_SECRET_BYTES` bytes.
 */
async function checkSecrets (o: StartupOptions): Promise<void> {
  const audiences = o.audiences.length > 0 ? o.audiences : ['']
  for (const aud of audiences) {
    const which = aud === '' ? 'the default audience' : `audience "${aud}"`
    let secret: unknown
    try {
      secret = await o.secret(aud)
    } catch (err) {
      throw new OptionsError('secret', `failed for ${which}: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
    }
    if (secret === undefined || secret === null || secret === '') {
      throw new OptionsError('secret', `returned no secret for ${which} (is the environment variable that holds it set?); ${MAKE_SECRET}`)
    }
    // A key ring (rotation, see the README's Sessions: keys) is checked key by key.
    const keys = Array.isArray(secret) ? secret.map((e: { kid?: unknown, secret?: unknown } | null) => [e?.secret, ` (key "${String(e?.kid)}")`] as const) : [[secret, ''] as const]
    if (keys.length === 0) throw new OptionsError('secret', `returned an empty key list for ${which}; ${MAKE_SECRET}`)
    for (const [key, label] of keys) {
      if (typeof key !== 'string') throw new OptionsError('secret', `must return a string or a list of { kid, secret } for ${which}${label}, got ${typeof key}`)
      const bytes = Buffer.byteLength(key, 'utf8')
      if (bytes < MIN_SECRET_BYTES) {
        throw new OptionsError('secret', `for ${which}${label} is ${bytes} bytes; at least ${MIN_SECRET_BYTES} are needed, ${MAKE_SECRET}`)
      }
    }
  }
}

// RFC 6265 §4.1.1 cookie-name and RFC 9110 §5.6.2 field-name: both are `token`.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
// A host with an optional port, as `allowedRedirectHosts` compares them (no scheme, path or user).
export const HOST = /^(?:\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/

function checkNames (o: StartupOptions): void {
  const cookies: Array<[string, string]> = [['cookies.sessionName', o.cookies.sessionName], ['cookies.xsrfName', o.cookies.xsrfName]]
  const headers: Array<[string, string]> = [['xsrf.headerName', o.xsrf.headerName]]
  if (o.tokenSources.header !== null) headers.unshift(['tokenSources.header', o.tokenSources.header])
  for (const [option, name] of cookies) {
    if (!TOKEN.test(name)) throw new OptionsError(option, `"${name}" is not a valid cookie name (letters, digits and !#$%&'*+-.^_\`|~ only)`)
  }
  for (const [option, name] of headers) {
    if (!TOKEN.test(name)) throw new OptionsError(option, `"${name}" is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`)
  }
  if (o.cookies.sessionName.toLowerCase() === o.cookies.xsrfName.toLowerCase()) {
    throw new OptionsError('cookies.xsrfName', `must differ from cookies.sessionName ("${o.cookies.sessionName}")`)
  }
  o.allowedRedirectHosts.forEach((host, i) => {
    if (!HOST.test(host)) throw new OptionsError(`allowedRedirectHosts[${i}]`, `"${host}" is not a host name (write "app.example.com" or "app.example.com:8443", no scheme or path)`)
  })
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

function warnWeakSettings (o: StartupOptions): void {
  const warn = (text: string): void => { o.logger.logf('[WARN] auth options: %s', text) }
  if (o.xsrf.disable) warn('xsrf.disable is true: cookie sessions are open to cross-site request forgery')
  const unsafe = [...o.xsrf.ignoreMethods].filter((m) => !SAFE_METHODS.has(m))
  if (unsafe.length > 0) warn(`xsrf.ignoreMethods lists ${unsafe.join(', ')}: those requests are open to cross-site request forgery`)
  const url = new URL(o.url)
  if (!o.cookies.secure && !isLoopback(url.hostname)) {
    warn(`session cookies are sent without Secure (url uses ${url.protocol.slice(0, -1)} on ${url.host}): use an https url outside development`)
  }
}

/** A loopback host name as URL.hostname spells it (`localhost`, `*.localhost`, `[::1]`, 127.x.y.z). */
export function isLoopback (host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
}
