/**
 * The last-login-method cookie (`lastLoginMethod` option): after a sign-in, a cookie naming the provider whose
 * route completed it (`local`, `github`, `passkey`, …), so that the sign-in page can put that button first.
 *
 * Not HttpOnly, on purpose: its one reader is the sign-in page's own script (a static or client-rendered page
 * cannot read an HttpOnly cookie), and it holds nothing a script may not see: a provider's route name, which
 * the page shows anyway. It is never a credential: nothing on the server trusts it. SameSite=Lax (sent on a
 * top-level navigation back to the sign-in page), Secure when the app's `url` is https, Path=/, kept after logout
 * (remembering the method across sessions is its purpose).
 */
import type { FastifyReply } from 'fastify'
import type { Duration } from '../../../lib/duration.js'
import { OptionsError } from '../../../lib/errors.js'
import { checkKeys, optionDuration, optionString } from '../../../lib/options.js'
import { setReplyCookie } from './cookie-jar.js'

/** The `lastLoginMethod` option's object form. */
export interface LastLoginMethodOptions {
  /** The cookie's name. Default `gatehouse_last_login`. */
  cookieName?: string | undefined
  /** How long the browser keeps it: ms or like `'180d'`. Default 180 days. */
  maxAge?: Duration | undefined
}

/** The option, checked. */
export interface ResolvedLastLoginMethod {
  readonly cookieName: string
  readonly maxAgeSec: number
  readonly secure: boolean
}

const NAME_RE = /^[A-Za-z0-9_-]{1,64}$/
const DEFAULT_MAX_AGE = 180 * 24 * 3600 * 1000

/** Reads `login.lastMethod`: off unless `true` or an object. OptionsError naming `name…`. */
export function resolveLastLoginMethod (value: unknown, url: URL, name = 'login.lastMethod'): ResolvedLastLoginMethod | undefined {
  if (value === undefined || value === false) return undefined
  const o = value === true ? {} : checkKeys(value, ['cookieName', 'maxAge'], name)
  const cookieName = optionString(`${name}.cookieName`, o.cookieName) ?? 'gatehouse_last_login'
  // A `__Host-`/`__Secure-` name would bind the browser to rules this cookie does not need; a plain name suffices.
  if (!NAME_RE.test(cookieName)) throw new OptionsError(`${name}.cookieName`, 'must be 1-64 letters, digits, "_" or "-"')
  const maxAgeMs = optionDuration(`${name}.maxAge`, o.maxAge, DEFAULT_MAX_AGE)
  return { cookieName, maxAgeSec: Math.max(1, Math.floor(maxAgeMs / 1000)), secure: url.protocol === 'https:' }
}

/** Adds the cookie naming `provider` to a sign-in's answer (nothing when the option is off). */
export function setLastLoginMethod (settings: ResolvedLastLoginMethod | undefined, reply: FastifyReply, provider: string): void {
  if (settings === undefined) return
  setReplyCookie(reply, settings.cookieName, provider, { path: '/', maxAge: settings.maxAgeSec, sameSite: 'lax', secure: settings.secure, httpOnly: false })
}
