/**
 * Deprecated names (issue 44 item 6): a moved or renamed public name keeps working in its old place for one minor
 * version, marked `@deprecated` (naming the new one) and warning once per process when used:
 * `process.emitWarning(message, { type: 'DeprecationWarning', code })`, one code per old name. Node prints the first
 * warning of each code; `node --no-deprecation` silences them, `--throw-deprecation` makes them throw (to find
 * every use in a test run). The catalogue is docs/guide/upgrading.md, which a test keeps equal to `DEPRECATIONS`.
 *
 * A type, a number or a string cannot warn: those carry the `@deprecated` mark only (the compiler and editors
 * show it).
 */

/** Every deprecated name that warns: its code and what replaces it. */
export const DEPRECATIONS = {
  // Providers and the root entry
  verifyProvider: { code: 'GATEHOUSE_DEP001', use: '`emailProvider`' },
  "providers entry { kind: 'verify' }": { code: 'GATEHOUSE_DEP002', use: "`{ kind: 'email' }`" },
  SendError: { code: 'GATEHOUSE_DEP003', use: '`MailSendError` (`fastify-gatehouse/providers`)' },
  // fastify.auth
  'fastify.auth.trace': { code: 'GATEHOUSE_DEP010', use: '`fastify.auth.optionalUser`' },
  'fastify.auth.recent': { code: 'GATEHOUSE_DEP011', use: '`fastify.auth.stepUp`' },
  'fastify.auth.listSessions': { code: 'GATEHOUSE_DEP012', use: '`fastify.auth.sessions.list`' },
  'fastify.auth.revokeSession': { code: 'GATEHOUSE_DEP013', use: '`fastify.auth.sessions.revoke`' },
  'fastify.auth.revokeUser': { code: 'GATEHOUSE_DEP014', use: '`fastify.auth.sessions.revokeUser`' },
  'fastify.auth.addOidcProvider': { code: 'GATEHOUSE_DEP015', use: '`app.register(oidcProvider, { name, cid, csecret, issuer })`' },
  'fastify.auth.addTelegramProvider': { code: 'GATEHOUSE_DEP016', use: '`app.register(telegramProvider, options)`' },
  // Options of authPlugin
  allowedRedirectHosts: { code: 'GATEHOUSE_DEP020', use: '`login.redirectHosts`' },
  rateLimit: { code: 'GATEHOUSE_DEP021', use: '`login.rateLimit`' },
  captcha: { code: 'GATEHOUSE_DEP022', use: '`login.captcha`' },
  crossSite: { code: 'GATEHOUSE_DEP023', use: '`login.crossSite`' },
  lastLoginMethod: { code: 'GATEHOUSE_DEP024', use: '`login.lastMethod`' },
  loginPage: { code: 'GATEHOUSE_DEP025', use: '`login.page`' },
  reauthentication: { code: 'GATEHOUSE_DEP026', use: '`factors.reauthentication`' },
  trustedDevices: { code: 'GATEHOUSE_DEP027', use: '`factors.trustedDevices`' },
  // The toolkit
  tracePlugin: { code: 'GATEHOUSE_DEP030', use: '`requestIdPlugin`' },
  // The stores
  newStore: { code: 'GATEHOUSE_DEP040', use: '`openAvatarStore`' }
} as const satisfies Record<string, { code: string; use: string }>

export type DeprecatedName = keyof typeof DEPRECATIONS

const warned = new Set<string>()

/** Emits the warning of `key` once per process. */
function warnOnce (key: string, code: string, message: string): void {
  if (warned.has(key)) return
  warned.add(key)
  process.emitWarning(`fastify-gatehouse: ${message} (docs/guide/upgrading.md)`, { type: 'DeprecationWarning', code })
}

/** Warns once per process that `name` is deprecated, naming what replaces it. */
export function warnDeprecated (name: DeprecatedName): void {
  const { code, use } = DEPRECATIONS[name]
  warnOnce(name, code, `${name.startsWith('providers entry') ? `the ${name}` : `\`${name}\``} is deprecated and goes in 1.0: use ${use} instead`)
}

/** The one code of every name that moved to another entry (or out of the public API): each warns once. */
export const MOVED_CODE = 'GATEHOUSE_DEP100'

/**
 * Warns once per process that `name` has moved from where it was imported: `to` is the entry to import it from,
 * or `null` for a name that leaves the public API (`instead` then says what to use).
 */
export function warnMoved (name: string, to: string | null, instead?: string): void {
  const where = to === null ? `is internal from 1.0${instead === undefined ? '' : `: ${instead}`}` : `moved: import it from '${to}' (the old import goes in 1.0)`
  warnOnce(`moved:${name}`, MOVED_CODE, `\`${name}\` ${where}`)
}

/** Calls `warn`, then does what `fn` does (same `this`, same result). */
export function deprecatedFunction<F extends (...args: never[]) => unknown> (warn: () => void, fn: F): F {
  const wrapped = function (this: unknown, ...args: Parameters<F>): ReturnType<F> {
    warn()
    return fn.apply(this, args) as ReturnType<F>
  }
  Object.defineProperty(wrapped, 'name', { value: fn.name })
  return wrapped as unknown as F
}

/**
 * A class (or any object) under an old name or in its old place: the same object, so `instanceof`, `new` and its
 * statics work as before, calling `warn` at each use (a construction, a call or a property read, `instanceof`
 * included); `warn` itself warns once.
 */
export function deprecatedObject<T extends object> (warn: () => void, target: T): T {
  return new Proxy(target, {
    construct (t, args, newTarget) { warn(); return Reflect.construct(t as new (...a: unknown[]) => object, args, newTarget) },
    apply (t, self, args) { warn(); return Reflect.apply(t as (...a: unknown[]) => unknown, self, args) },
    get (t, key, receiver) { warn(); return Reflect.get(t, key, receiver) }
  })
}
