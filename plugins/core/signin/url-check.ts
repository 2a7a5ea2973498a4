/**
 * The `url` option against the address requests really arrive at. A tutorial's `url: 'https://example.com'`
 * copied onto a development machine works badly and silently: `__Host-` Secure cookies that curl will not send
 * back over http, and logins that redirect to example.com. Checked on login requests (where both show) that
 * come to a loopback host: there a different origin is a mistake, not a reverse proxy. Behind a proxy the Host
 * a request names is the proxy's business, so other hosts are never warned about. One warning per core.
 */
import type { FastifyRequest } from 'fastify'
import type { CoreInternals } from './internals.js'
import { HOST, isLoopback } from '../base/startup-check.js'

/**
 * The origin a request was sent to, as its Host (or X-Forwarded-Host under `trustProxy`) and protocol say, when
 * that is a loopback origin other than `origin`; undefined otherwise (also for a Host that is not a host).
 */
export function loopbackMismatch (origin: string, protocol: string, host: string | undefined): string | undefined {
  if (host === undefined || !HOST.test(host.toLowerCase()) || (protocol !== 'http' && protocol !== 'https')) return undefined
  if (!URL.canParse(`${protocol}://${host}`)) return undefined // a port past 65535
  const arrived = new URL(`${protocol}://${host}`)
  if (!isLoopback(arrived.hostname)) return undefined
  return arrived.origin === origin ? undefined : arrived.origin
}

/** The warning's text: what `url` makes happen on that address, and the fix. */
export function mismatchWarning (url: string, arrived: string, secureCookies: boolean): string {
  const cookies = secureCookies ? ' and sets Secure cookies (__Host- names) that plain http clients do not send back' : ''
  return `url is ${url} but requests arrive at ${arrived}: a login here redirects to ${url}${cookies}; ` +
    `set url to ${arrived} while developing (url is the public base address)`
}

const warned = new WeakSet<CoreInternals>()

/**
 * The Host light-my-request gives an `app.inject` call that names none. Such a request arrived nowhere: it is an
 * app's test (testing.md's `build()` with inject), whose `url` rightly names the real server, not a development
 * server answering on the wrong address. An inject call that sets a Host is taken at its word.
 */
const INJECT_DEFAULT_HOST = 'localhost:80'

/** Logs the mismatch warning the first time a login request shows one; free once it has. */
export function checkArrivalOrigin (core: CoreInternals, request: FastifyRequest): void {
  if (warned.has(core)) return
  if ((request.raw as { isLightMyRequest?: boolean | undefined }).isLightMyRequest === true && request.headers.host === INJECT_DEFAULT_HOST) return
  const arrived = loopbackMismatch(core.options.origin, request.protocol, request.host)
  if (arrived === undefined) return
  warned.add(core)
  core.logger.logf('[WARN] auth options: %s', mismatchWarning(core.options.url, arrived, core.options.cookies.secure))
}
