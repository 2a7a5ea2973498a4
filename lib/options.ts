/**
 * Option validators shared by every plugin: each throws an `OptionsError` naming the option, so a
 * configuration mistake is reported the same way wherever it is made.
 */
import { OptionsError } from './errors.js'
import { parseDuration } from './duration.js'

/** Keys Fastify passes through every plugin's options object. */
export const FASTIFY_KEYS: readonly string[] = ['prefix', 'logLevel', 'logSerializers']

/**
 * Checks that `opts` is an object with no key outside `known` (Fastify's own registration keys allowed).
 * `label` prefixes the option names in errors (`'avatar'` → `avatar.foo`).
 */
export function checkKeys (opts: unknown, known: readonly string[], label?: string): Record<string, unknown> {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw new OptionsError(label ?? '(options)', 'must be an object')
  for (const key of Object.keys(opts)) {
    if (!known.includes(key) && !FASTIFY_KEYS.includes(key)) throw unknownOption(named(label, key), key, known)
  }
  return opts as Record<string, unknown>
}

/**
 * The keys of an options interface, written as a record so that the compiler checks the list against the type:
 * `keyList<SessionOptions>({ tokenDuration: true, … })` fails to compile when a key of `SessionOptions` is
 * missing or one is extra, so a new option cannot be forgotten in the list that validation and the root's split use.
 */
export function keyList<T> (keys: Record<keyof Required<T>, true>): readonly string[] {
  return Object.freeze(Object.keys(keys))
}

/**
 * An options group (`cookies`, `session`, …): undefined when absent (`{}` then), else an object whose keys are
 * all in `known`; an unknown key is an OptionsError naming its path (`cookies.sameSite`).
 */
export function optionGroup<T> (name: string, value: unknown, known: readonly string[]): Partial<T> {
  if (value === undefined) return {}
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new OptionsError(name, 'must be an object')
  // Fastify's registration keys belong to the top level only.
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw unknownOption(named(name, key), key, known)
  }
  return value as Partial<T>
}

/**
 * Why a required text option (a secret, a client id) is not there: missing or empty, with the likely cause, an
 * environment variable that holds it and is not set (`process.env.GITHUB_CID` is then undefined or '').
 */
export function missingText (value: unknown, what: string): string {
  return `is ${value === '' ? 'an empty string' : value === undefined ? 'missing' : 'not a string'}: ${what} (is the environment variable that holds it set?)`
}

/** The OptionsError of an unknown key at `path`, with the known name it was probably meant to be. */
export function unknownOption (path: string, key: string, known: readonly string[]): OptionsError {
  return new OptionsError(path, `is not a known option${didYouMean(key, known)}`)
}

/** `; did you mean "secret"?` when `given` is a likely slip for one of `known`, else ''. */
export function didYouMean (given: string, known: readonly string[]): string {
  const near = nearestName(given, known)
  return near === undefined ? '' : `; did you mean "${near}"?`
}

/**
 * The name of `known` that `given` most likely meant: the same name in another case (`URL` → `url`), one that
 * starts with the other (`check` → `checker`), or the closest within one edit for short names and two for longer
 * ones (`secrets` → `secret`). Undefined when nothing is that close, so a suggestion is never a guess.
 */
export function nearestName (given: string, known: readonly string[]): string | undefined {
  const g = given.toLowerCase()
  const exact = known.find((k) => k.toLowerCase() === g)
  if (exact !== undefined) return exact
  let best: { name: string; distance: number } | undefined
  for (const name of known) {
    const k = name.toLowerCase()
    const prefix = Math.min(k.length, g.length) >= 4 && (k.startsWith(g) || g.startsWith(k))
    const distance = prefix ? Math.abs(k.length - g.length) : editDistance(g, k)
    const allowed = prefix ? Infinity : Math.min(g.length, k.length) <= 4 ? 1 : 2
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { name, distance }
  }
  return best?.name
}

/** Levenshtein distance (insertions, deletions, substitutions), for names of a few dozen characters. */
function editDistance (a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = row
  }
  return prev[b.length]!
}

/**
 * The option path of a provider's options: its kind, and its name when that differs (`totp.encryptionKey` for the
 * provider of the default name, `passkey.work.rpID` for one named `work`), so a path names the provider once.
 */
export function providerLabel (kind: string, name: string): string {
  return name === kind ? kind : `${kind}.${name}`
}

/** `label.key`, or `key` without a label. */
export function named (label: string | undefined, key: string): string {
  return label === undefined ? key : `${label}.${key}`
}

/** A duration in ms or like `'15m'`, `'1h30m'`; `dflt` when absent. */
export function optionDuration (name: string, value: unknown, dflt: number): number {
  if (value === undefined) return dflt
  const ms = parseDuration(value as number | string)
  if (ms === undefined) throw new OptionsError(name, `must be a positive duration in ms or like "15m", got ${JSON.stringify(value)}`)
  return ms
}

/**
 * A lifetime (of a session, a token, a confirmation link) as `optionDuration` reads it. A bare number below one
 * second is legal but almost always seconds written where milliseconds are read (`tokenDuration: 60`): `warn` is
 * told, with the spelling that was probably meant.
 */
export function optionLifetime (name: string, value: unknown, dflt: number, warn: (text: string) => void): number {
  const ms = optionDuration(name, value, dflt)
  if (typeof value === 'number' && value > 0 && value < 1000) {
    warn(`${name} is ${value}: a bare number is milliseconds, so this lasts ${value} ms; write '${value}s' (or ${value * 1000}) for ${value} seconds`)
  }
  return ms
}

/** A non-empty string, or undefined when absent. */
export function optionString (name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new OptionsError(name, 'must be a string')
  if (value === '') throw new OptionsError(name, 'must not be empty')
  return value
}

/** A boolean, or `dflt` when absent. */
export function optionBoolean (name: string, value: unknown, dflt: boolean): boolean
export function optionBoolean (name: string, value: unknown): boolean | undefined
export function optionBoolean (name: string, value: unknown, dflt?: boolean): boolean | undefined {
  if (value === undefined) return dflt
  if (typeof value !== 'boolean') throw new OptionsError(name, 'must be a boolean')
  return value
}

/** A list of non-empty strings (a copy), `[]` when absent. */
export function optionList (name: string, value: unknown): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v !== '')) throw new OptionsError(name, 'must be a list of non-empty strings')
  return [...value]
}

/** An integer `>= min`, `dflt` when absent. */
export function optionInt (name: string, value: unknown, dflt: number, min = 0): number {
  if (value === undefined) return dflt
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) throw new OptionsError(name, `must be an integer >= ${min}`)
  return value
}

/** An http(s) URL (parsed), required. */
export function optionUrl (name: string, value: unknown): URL {
  if (typeof value !== 'string' || value === '') throw new OptionsError(name, `must be an http(s) URL, got ${JSON.stringify(value)}`)
  let u: URL
  try { u = new URL(value) } catch { throw new OptionsError(name, `is not a valid URL: ${JSON.stringify(value)}`) }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new OptionsError(name, 'must be an http or https URL')
  return u
}

/** A route prefix such as `/auth` (trailing slashes dropped), `dflt` when absent. */
export function optionPrefix (name: string, value: unknown, dflt: string): string {
  if (value === undefined) return dflt
  if (typeof value !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(value)) throw new OptionsError(name, 'must be a path starting with "/"')
  return value.replace(/\/+$/, '') || dflt
}

/** A function, or `dflt` when absent. */
export function optionFunction<F> (name: string, value: unknown): F | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'function') throw new OptionsError(name, 'must be a function')
  return value as F
}

/** Accepts a function or an object with the named method; returns a function. */
export function adaptFunction<F> (name: string, value: unknown, method: string, required = false): F | undefined {
  if (value === undefined || value === null) {
    if (required) throw new OptionsError(name, `is required (a function or an object with ${method}())`)
    return undefined
  }
  if (typeof value === 'function') return value as F
  if (typeof value === 'object' && typeof (value as Record<string, unknown>)[method] === 'function') {
    const obj = value as Record<string, (...a: unknown[]) => unknown>
    return ((...a: unknown[]) => obj[method]!(...a)) as F
  }
  throw new OptionsError(name, `must be a function or an object with ${method}()`)
}

/** A provider or route name: 1-64 letters, digits, `_` or `-`. */
export const NAME_RE = /^[A-Za-z0-9_-]{1,64}$/

/** A provider name, required. */
export function optionName (name: string, value: unknown, dflt?: string): string {
  if (value === undefined && dflt !== undefined) return dflt
  if (typeof value !== 'string' || !NAME_RE.test(value)) throw new OptionsError(name, 'must be 1-64 letters, digits, "_" or "-"')
  return value
}
