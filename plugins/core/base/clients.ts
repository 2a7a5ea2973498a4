/**
 * The app's own clients without cookies (`clients` option): mobile apps, command-line tools, single-page apps on
 * another origin. Public clients only (RFC 8252 §8.4): an id, no secret; a client is who it says it is, and what
 * protects its tokens is the redirect URI it registered, PKCE and the rotation of its refresh tokens. This is a
 * first-party sign-in server for the app's own clients, not an identity provider for third parties.
 */
import { OptionsError } from '../../../lib/errors.js'
import type { Duration } from '../../../lib/duration.js'
import { checkKeys, keyList, optionDuration, optionString } from '../../../lib/options.js'

/** One client of the app (`clients[i]`). */
export interface ClientOptions {
  /** The `client_id` the client sends: 1-64 letters, digits, `.`, `_`, `-` or `:`. */
  id: string
  /**
   * What the client is: `native` (a mobile or desktop app signing in through the system browser, RFC 8252),
   * `device` (a CLI or TV signing in on another device, RFC 8628) or `spa` (a browser app on another origin).
   */
  kind: 'native' | 'device' | 'spa'
  /**
   * The name people see in their session list (the `device` of the client's sessions), on the device approval page
   * and on the sign-in confirmation page: 1-64 printable characters (no control or format characters, no line
   * breaks), trimmed. Default: the id.
   */
  name?: string | undefined
  /**
   * Where a sign-in may send the user back with a code (`native` and `spa`), compared exactly: a private-use
   * scheme (`com.example.app:/callback`), a claimed https URL, or a loopback `http://127.0.0.1/…` (any port).
   */
  redirectUris?: readonly string[] | undefined
  /** Lifetimes of the client's refresh tokens. */
  refreshToken?: ClientRefreshOptions | undefined
}

/** Refresh-token lifetimes of one client (`clients[i].refreshToken`). */
export interface ClientRefreshOptions {
  /** Absolute lifetime of a family from its sign-in; at most `session.maxAge` (its default). */
  maxAge?: Duration | undefined
  /** A family unused this long ends. Default 14 days (capped at `maxAge`). */
  idleTimeout?: Duration | undefined
}

/** A registered client after validation. */
export interface RegisteredClient {
  readonly id: string
  readonly kind: ClientOptions['kind']
  readonly name: string
  readonly redirectUris: ReadonlySet<string>
  /** Loopback redirect URIs without their port (RFC 8252 §7.3: the port is the app's choice at run time). */
  readonly loopbackUris: ReadonlySet<string>
  readonly maxAgeMs: number
  readonly idleTimeoutMs: number
}

const CLIENT_KEYS = keyList<ClientOptions>({ id: true, kind: true, name: true, redirectUris: true, refreshToken: true })
const REFRESH_KEYS = keyList<ClientRefreshOptions>({ maxAge: true, idleTimeout: true })
const KINDS = new Set(['native', 'device', 'spa'])
const CLIENT_ID = /^[\w.:-]{1,64}$/
const DEFAULT_IDLE_MS = 14 * 86_400_000
const MIN_REFRESH_MS = 60_000
const MAX_NAME = 64
/** Control, format (bidi overrides, zero-width), private-use and unassigned characters, and line breaks. */
const UNPRINTABLE = /[\p{C}\p{Zl}\p{Zp}]/u

/** Validates `clients` at registration; the registry by id. Throws OptionsError naming the option path. */
export function resolveClients (value: unknown, sessionMaxAgeMs: number): ReadonlyMap<string, RegisteredClient> {
  const clients = new Map<string, RegisteredClient>()
  if (value === undefined) return clients
  if (!Array.isArray(value)) throw new OptionsError('clients', 'must be an array of { id, kind, redirectUris?, name?, refreshToken? }')
  value.forEach((raw: unknown, i) => {
    const client = resolveClient(`clients[${i}]`, raw, sessionMaxAgeMs)
    if (clients.has(client.id)) throw new OptionsError(`clients[${i}].id`, `"${client.id}" is registered twice`)
    clients.set(client.id, client)
  })
  return clients
}

function resolveClient (path: string, raw: unknown, sessionMaxAgeMs: number): RegisteredClient {
  if (raw === null || typeof raw !== 'object') throw new OptionsError(path, 'must be an object { id, kind, … }')
  const c = checkKeys(raw, CLIENT_KEYS, path) as unknown as ClientOptions
  const id = optionString(`${path}.id`, c.id)
  if (id === undefined || !CLIENT_ID.test(id)) throw new OptionsError(`${path}.id`, 'is required: 1-64 letters, digits, ".", "_", "-" or ":"')
  if (!KINDS.has(c.kind)) throw new OptionsError(`${path}.kind`, 'must be "native", "device" or "spa"')
  const uris = redirectUrisOf(`${path}.redirectUris`, c.redirectUris, c.kind)
  const refresh = checkKeys(c.refreshToken ?? {}, REFRESH_KEYS, `${path}.refreshToken`) as ClientRefreshOptions
  const maxAgeMs = optionDuration(`${path}.refreshToken.maxAge`, refresh.maxAge, sessionMaxAgeMs)
  if (maxAgeMs < MIN_REFRESH_MS || maxAgeMs > sessionMaxAgeMs) {
    throw new OptionsError(`${path}.refreshToken.maxAge`, 'must be between 1 minute and session.maxAge (a family is a session: its revocation lives that long)')
  }
  const idleTimeoutMs = Math.min(maxAgeMs, optionDuration(`${path}.refreshToken.idleTimeout`, refresh.idleTimeout, DEFAULT_IDLE_MS))
  if (idleTimeoutMs < MIN_REFRESH_MS) throw new OptionsError(`${path}.refreshToken.idleTimeout`, 'must be at least 1 minute')
  return { id, kind: c.kind, name: nameOf(`${path}.name`, c.name) ?? id, ...uris, maxAgeMs, idleTimeoutMs }
}

/** The display name: shown on pages and in session lists, so short and printable (nothing that reorders text). */
function nameOf (path: string, value: unknown): string | undefined {
  const name = optionString(path, value)?.trim()
  if (name === undefined) return undefined
  if (name === '' || [...name].length > MAX_NAME || UNPRINTABLE.test(name)) {
    throw new OptionsError(path, `must be 1-${MAX_NAME} printable characters (no control, format or line-break characters)`)
  }
  return name
}

/** Redirect URIs: none for a device client, at least one for the others; no fragment, no plain http but loopback. */
function redirectUrisOf (path: string, value: unknown, kind: string): Pick<RegisteredClient, 'redirectUris' | 'loopbackUris'> {
  const list = value === undefined ? [] : value
  if (!Array.isArray(list) || list.some((u) => typeof u !== 'string')) throw new OptionsError(path, 'must be an array of URLs')
  if (kind === 'device' && list.length > 0) throw new OptionsError(path, 'a device client signs in without a redirect: leave it out')
  if (kind !== 'device' && list.length === 0) throw new OptionsError(path, `a ${kind} client needs at least one`)
  const exact = new Set<string>()
  const loopback = new Set<string>()
  for (const uri of list as string[]) {
    let url: URL
    try { url = new URL(uri) } catch { throw new OptionsError(path, `"${uri}" is not a URL`) }
    if (url.hash !== '' || uri.includes('#')) throw new OptionsError(path, `"${uri}" has a fragment`)
    if (url.protocol === 'http:' && isLoopback(url.hostname)) loopback.add(withoutPort(url))
    else if (url.protocol === 'http:' || url.protocol === 'javascript:' || url.protocol === 'data:') throw new OptionsError(path, `"${uri}": plain http only on loopback (127.0.0.1 or [::1])`)
    exact.add(uri)
  }
  return { redirectUris: exact, loopbackUris: loopback }
}

/**
 * True when `uri` is one of the client's redirect URIs: the exact string, or for a registered loopback URI the
 * same URI on any port (RFC 8252 §7.3). Nothing else: no prefix, no other query, no other path.
 */
export function allowsRedirect (client: RegisteredClient, uri: string): boolean {
  if (client.redirectUris.has(uri)) return true
  if (client.loopbackUris.size === 0 || !uri.startsWith('http://')) return false
  let url: URL
  try { url = new URL(uri) } catch { return false }
  return isLoopback(url.hostname) && url.href === uri && client.loopbackUris.has(withoutPort(url))
}

function isLoopback (hostname: string): boolean {
  return hostname === '127.0.0.1' || hostname === '[::1]'
}

function withoutPort (url: URL): string {
  const copy = new URL(url.href)
  copy.port = ''
  return copy.href
}
