/**
 * Which query and body keys hold secrets, and a URL with their values masked: shared by the toolkit's request
 * logger and the auth routes' request log line (neither depends on the other).
 */

/** The words of secret query and body keys the request logger always masks (see `isSecretKey` for the rule). */
export const SECRET_KEY_WORDS: readonly string[] = Object.freeze([
  'password', 'passwd', 'passphrase', 'pwd', 'pass', 'secret', 'token', 'credentials', 'api_key', 'apikey', 'key',
  'session', 'auth', 'authorization', 'jwt', 'sig', 'signature', 'otp'
])
export const MASK = '********'
/** Words this long mask every key that contains them; shorter ones only whole words and key parts. */
const SUBSTRING_MIN = 5

/** Replaces the values of secret keys in a URL's query; the rest of the URL is kept as sent (encoded). */
export function sanitizeUrl (url: string, secretKeys: ReadonlySet<string>): string {
  const q = url.indexOf('?')
  if (q < 0) return url
  const rule = ruleOf(secretKeys)
  const masked = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=')
    if (eq < 0) return pair
    return isSecretKey(decodeKey(pair.slice(0, eq)), rule) ? `${pair.slice(0, eq)}=${MASK}` : pair
  })
  return `${url.slice(0, q)}?${masked.join('&')}`
}

export interface SecretRule { long: readonly string[]; short: ReadonlySet<string> }

const rules = new WeakMap<ReadonlySet<string>, SecretRule>()

export function ruleOf (words: ReadonlySet<string>): SecretRule {
  let rule = rules.get(words)
  if (rule === undefined) {
    const lower = [...words].map((w) => w.toLowerCase())
    rule = { long: lower.filter((w) => w.length >= SUBSTRING_MIN), short: new Set(lower.filter((w) => w.length < SUBSTRING_MIN)) }
    rules.set(words, rule)
  }
  return rule
}

// Parts of a key: runs of letters or digits, camelCase split (`apiKey`, `XMLHttpKey`, `key2`).
const KEY_PART = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g

/**
 * A key is secret when it contains a secret word of five or more letters anywhere (bearer tokens travel as
 * `access_token`, client secrets as `client_secret`, sessions as `sessionid`), or when a shorter word (`key`,
 * `pwd`, `sig`, `otp`, …) is the whole key or one of its parts: `api-key`, `apiKey`, `user_pwd`, `X-Sig`, `OTP2`
 * are masked, `monkey`, `design`, `author` are not (a short word inside a longer one is mostly another word).
 */
export function isSecretKey (key: string, rule: SecretRule): boolean {
  const k = key.toLowerCase()
  for (const word of rule.long) if (k.includes(word)) return true
  if (rule.short.size === 0) return false
  if (rule.short.has(k)) return true
  for (const part of key.match(KEY_PART) ?? []) if (rule.short.has(part.toLowerCase())) return true
  return false
}

function decodeKey (key: string): string {
  try { return decodeURIComponent(key.replace(/\+/g, ' ')) } catch { return key }
}
