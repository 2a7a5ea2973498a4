/**
 * Options of the passkey provider, checked at registration: each mistake is an OptionsError naming the option.
 */
import { OptionsError } from '../../lib/errors.js'
import type { Duration } from '../../lib/duration.js'
import { checkKeys, optionLifetime, optionFunction, optionInt, optionList, optionName, optionString, optionUrl, providerLabel } from '../../lib/options.js'
import type { StateStoreOption } from '../../stores/state/resolve.js'
import { userId, type MaybePromise, type UserData } from '../../lib/user.js'
import type { PasskeyStoreOption } from '../../stores/passkey/index.js'

/** Options of `passkeyProvider`. */
export interface PasskeyProviderOptions {
  /** Route name: `{authPrefix}/<name>/…`. Default `passkey`. */
  name?: string | undefined
  /**
   * Where passkeys live: `memory://` (default; one process), `bolt:///path/passkeys.db` (one lmdb file),
   * `redis://host:port/db` (shared by every instance), or any `PasskeyStore` object (left open on close).
   */
  store?: PasskeyStoreOption | undefined
  /** Relying-party id: the domain passkeys are bound to. Default: the host name of the core's `url`. */
  rpID?: string | undefined
  /** Name the browser shows when a passkey is created. Default: the RP id. */
  rpName?: string | undefined
  /** Origins a passkey response may come from. Default: the origin of the core's `url`. Each must be on the RP id. */
  origins?: string[] | undefined
  /** Lifetime of a challenge (the time the user has for the browser's prompt): ms or `'5m'`. Default 5 minutes. */
  challengeTtl?: Duration | undefined
  /**
   * User verification (PIN, fingerprint) when a passkey alone signs in or is added: `required` (default: a passkey
   * then stands for two factors) or `preferred`. As a second factor after a password, presence is enough.
   */
  userVerification?: 'required' | 'preferred' | undefined
  /**
   * Direct and SAML providers whose logins must also present a passkey when the user has one (opt-in). The login
   * then answers 401 `GATEHOUSE_SECOND_FACTOR` (a SAML sign-in in the browser: a redirect to the sign-in page) and a
   * pending-login cookie instead of a session. Default none.
   */
  secondFactor?: string[] | undefined
  /** Lifetime of a pending login between the password and the passkey: ms or `'5m'`. Default 5 minutes. */
  pendingTtl?: Duration | undefined
  /**
   * Whose passkeys a typed user name may use (sign-in with a name): a provider name (the user id is the one that
   * provider gives that name, `userId(provider, name)`) or a function answering the user id (undefined: nobody).
   * Default `'local'`, the direct provider's default name.
   */
  findUser?: string | ((name: string) => MaybePromise<string | undefined>) | undefined
  /**
   * The user a passkey signs in, looked up at each sign-in (e.g. to refuse a deleted account: answer null).
   * Default: the user as stored with the passkey (name, id, email).
   */
  loadUser?: ((user: UserData) => MaybePromise<UserData | null | undefined>) | undefined
  /** Most passkeys one user may hold. Default 10. */
  maxPerUser?: number | undefined
  /** Where challenges (sign-in, registration, re-authentication) and pending logins are kept: a StateStore or a `redis://` address. Default: the core's. */
  stateStore?: StateStoreOption | undefined
}

/** Options after defaults. */
export interface ResolvedPasskeyOptions {
  name: string
  store: unknown
  rpID: string
  rpName: string
  origins: string[]
  challengeTtlMs: number
  userVerification: 'required' | 'preferred'
  secondFactor: string[]
  pendingTtlMs: number
  findUser: (name: string) => MaybePromise<string | undefined>
  loadUser: ((user: UserData) => MaybePromise<UserData | null | undefined>) | undefined
  maxPerUser: number
  stateStore: StateStoreOption | undefined
}

const KEYS = ['name', 'store', 'rpID', 'rpName', 'origins', 'challengeTtl', 'userVerification', 'secondFactor', 'pendingTtl',
  'findUser', 'loadUser', 'maxPerUser', 'stateStore']
// A domain name: labels of letters, digits and hyphens (an IP address also passes, for loopback tests).
const HOST_RE = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/

/** Checks and completes the options; `url` is the core's public base address. */
export function resolvePasskeyOptions (opts: PasskeyProviderOptions, url: string, warn: (text: string) => void): ResolvedPasskeyOptions {
  const o = checkKeys(opts ?? {}, KEYS, 'passkey')
  const name = optionName('passkey.name', o.name, 'passkey')
  const label = providerLabel('passkey', name)
  const base = new URL(url)
  const rpID = optionString(`${label}.rpID`, o.rpID)?.toLowerCase() ?? base.hostname.replace(/^\[|\]$/g, '')
  if (!HOST_RE.test(rpID)) throw new OptionsError(`${label}.rpID`, `must be a domain name, got ${JSON.stringify(rpID)}`)
  const origins = o.origins === undefined ? [base.origin] : optionList(`${label}.origins`, o.origins).map((v) => checkOrigin(`${label}.origins`, v))
  if (origins.length === 0) throw new OptionsError(`${label}.origins`, 'must name at least one origin')
  for (const origin of origins) {
    const host = new URL(origin).hostname.replace(/^\[|\]$/g, '')
    // The browser refuses an RP id that is not the origin's host or a parent domain of it; say so now.
    if (host !== rpID && !host.endsWith(`.${rpID}`)) throw new OptionsError(`${label}.rpID`, `"${rpID}" is not the host of ${origin} nor a parent domain of it`)
  }
  const userVerification = o.userVerification ?? 'required'
  if (userVerification !== 'required' && userVerification !== 'preferred') throw new OptionsError(`${label}.userVerification`, 'must be "required" or "preferred"')
  const secondFactor = optionList(`${label}.secondFactor`, o.secondFactor)
  return {
    name,
    store: o.store,
    rpID,
    rpName: optionString(`${label}.rpName`, o.rpName) ?? rpID,
    origins,
    challengeTtlMs: optionLifetime(`${label}.challengeTtl`, o.challengeTtl, 5 * 60_000, warn),
    userVerification,
    secondFactor,
    pendingTtlMs: optionLifetime(`${label}.pendingTtl`, o.pendingTtl, 5 * 60_000, warn),
    findUser: findUserOption(`${label}.findUser`, o.findUser),
    loadUser: optionFunction(`${label}.loadUser`, o.loadUser),
    maxPerUser: optionInt(`${label}.maxPerUser`, o.maxPerUser, 10, 1),
    stateStore: o.stateStore as StateStoreOption | undefined
  }
}

function checkOrigin (option: string, value: string): string {
  const u = optionUrl(option, value)
  if (u.origin !== value.replace(/\/$/, '')) throw new OptionsError(option, `must hold origins (scheme, host, port), got ${JSON.stringify(value)}`)
  return u.origin
}

function findUserOption (option: string, value: unknown): ResolvedPasskeyOptions['findUser'] {
  if (value === undefined) return (name) => userId('local', name)
  if (typeof value === 'string') {
    const provider = optionName(option, value)
    return (name) => userId(provider, name)
  }
  return optionFunction<ResolvedPasskeyOptions['findUser']>(option, value)!
}
