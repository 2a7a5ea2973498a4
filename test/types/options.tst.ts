/**
 * Type test of the option key lists: a list is written as a record of its options type (`keyList`), so a list that
 * forgets a key, or names one the type does not have, does not compile. Compiled (not run) by `npm run typecheck`.
 */
import { keyList } from '../../lib/options.js'
import type { CookieOptions, CoreOptions, SessionOptions } from '../../plugins/core/options.js'
import type { AuthOptions } from '../../auth.js'

// Every key: compiles.
export const cookies = keyList<CookieOptions>({ sessionName: true, xsrfName: true, sameSite: true, secure: true, domain: true })

// @ts-expect-error a list missing `domain` (a new option forgotten in the list) is refused
export const missing = keyList<CookieOptions>({ sessionName: true, xsrfName: true, sameSite: true, secure: true })

// @ts-expect-error a list with a key the type does not have is refused
export const extra = keyList<SessionOptions>({ tokenDuration: true, maxAge: true, idleTimeout: true, cacheSize: true, signingKeys: true, refreshCache: true, cookieDuration: true })

// The groups are objects on the options, under the same names in the root and the core.
export const grouped: AuthOptions = {
  secret: () => 's',
  url: 'https://example.com',
  session: { tokenDuration: '15m', maxAge: '31d', idleTimeout: 3_600_000, cacheSize: 0 },
  cookies: { sameSite: 'Strict', domain: 'example.com' },
  xsrf: { headerName: 'X-CSRF' },
  tokenSources: { header: false, query: 'jwt' },
  basicAuth: { adminPasswd: 'p' },
  avatar: false
}
export const core: CoreOptions = grouped

// @ts-expect-error the 0.x flat names are gone (cookieDuration is session.maxAge)
export const flat: AuthOptions = { secret: () => 's', url: 'https://example.com', cookieDuration: '1d' }
