/**
 * How a built-in OAuth2 provider is written down: a `BuiltinSpec` (endpoints, scopes, quirks and the mapping of
 * its documented user document), or, for a provider whose addresses depend on the app's own account there (a
 * tenant, a domain, an issuer, a self-managed base URL), a `SettingsSpec` that builds one from those settings.
 * A required setting left out fails registration with an OptionsError naming it.
 */
import { OptionsError } from '../../lib/errors.js'
import type { OAuth2ProviderConfig } from './engine.js'

type FullSpec = Omit<OAuth2ProviderConfig, 'name' | 'cid' | 'csecret' | 'timeout' | 'handshakeTtl'>
/**
 * A built-in as written in the data files: PKCE S256 and client authentication by form fields unless the provider
 * says otherwise (most document both), so each entry states only what is its own.
 */
export type BuiltinSpec = Omit<FullSpec, 'pkce' | 'tokenAuth'> & Partial<Pick<FullSpec, 'pkce' | 'tokenAuth'>>

/**
 * The settings a built-in may need beyond the client id and secret. Which ones a provider takes, and which it
 * requires, is listed in its section of docs/providers/builtins.md.
 */
export interface ProviderSettings {
  /** Base URL of a self-managed instance (gitlab). Default the provider's public service. */
  baseURL?: string | undefined
  /**
   * The account's domain at the provider, a host name: auth0 (`acme.eu.auth0.com`), cognito (the user pool's
   * domain, `acme.auth.eu-west-1.amazoncognito.com`), salesforce (a My Domain, default `login.salesforce.com`).
   */
  domain?: string | undefined
  /** `'live'` (the default) or `'sandbox'`: which PayPal environment's hosts (paypal). */
  environment?: 'live' | 'sandbox' | undefined
  /**
   * The User-Agent Reddit asks each app for, `<platform>:<app ID>:<version> (by /u/<username>)` (reddit).
   * Default `web:<client id>:1.0 (fastify-gatehouse)`.
   */
  userAgent?: string | undefined
  /** Directory (tenant) id, a GUID (entra). */
  tenant?: string | undefined
  /** User pool id, `<region>_<id>` (cognito). */
  userPool?: string | undefined
}

/** One setting of a `SettingsSpec`: how it is checked and whether it must be given. */
export interface SettingRule {
  required: boolean
  /** `url`: https (http only on loopback); `host`: a host name; else a pattern. */
  kind: 'url' | 'host' | RegExp
  /** What the setting is, for the OptionsError (`'the realm URL, https://sso.example.com/realms/acme'`). */
  hint: string
}

/** A built-in whose endpoints are built from the app's settings. */
export interface SettingsSpec {
  settings: Record<string, SettingRule>
  build: (settings: Readonly<Record<string, string | undefined>>) => BuiltinSpec
}

/** A built-in as the registry holds it. */
export type BuiltinEntry = BuiltinSpec | SettingsSpec

const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i
const HOST = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/i

/** The setting names an entry takes besides the common overrides (none for a plain spec). */
export function settingNames (entry: BuiltinEntry): string[] {
  return 'build' in entry ? Object.keys(entry.settings) : []
}

/**
 * The provider's spec: a plain one as it is, a settings one built from the checked `options`. Throws
 * OptionsError naming `<label>.<setting>` for a missing or malformed setting.
 */
export function resolveSpec (entry: BuiltinEntry, options: Record<string, unknown>, label: string): BuiltinSpec {
  if (!('build' in entry)) return entry
  const values: Record<string, string | undefined> = {}
  for (const [key, rule] of Object.entries(entry.settings)) {
    values[key] = checkSetting(`${label}.${key}`, options[key], rule)
  }
  return entry.build(values)
}

function checkSetting (option: string, value: unknown, rule: SettingRule): string | undefined {
  if (value === undefined) {
    if (rule.required) throw new OptionsError(option, `is required: ${rule.hint}`)
    return undefined
  }
  if (typeof value !== 'string' || value === '') throw new OptionsError(option, `must be a non-empty string: ${rule.hint}`)
  if (rule.kind === 'url') {
    let u: URL
    try { u = new URL(value) } catch { throw new OptionsError(option, `is not a URL: ${rule.hint}`) }
    // Codes, tokens and the client secret travel to these addresses: in clear only to this machine.
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && LOOPBACK_HOST.test(u.hostname))) {
      throw new OptionsError(option, `must be an https URL (http only on loopback): ${rule.hint}`)
    }
    if (u.search !== '' || u.hash !== '') throw new OptionsError(option, `must have no query or fragment: ${rule.hint}`)
    return value
  }
  const pattern = rule.kind === 'host' ? HOST : rule.kind
  if (!pattern.test(value)) throw new OptionsError(option, `is malformed: ${rule.hint}`)
  return value
}

/** A URL without its trailing slashes, to append paths to. */
export function trimSlash (url: string): string {
  return url.replace(/\/+$/, '')
}
