/**
 * Options both server flavours share, validated once with errors naming the option.
 */
import { isIP } from 'node:net'
import { OptionsError } from '../lib/errors.js'
import { noopLogger, type Logger } from '../lib/logging/logger.js'
import type { Duration } from '../lib/duration.js'
import { optionDuration } from '../lib/options.js'
import type { LoginPageHandler } from './login-page.js'
import type { AuthServerConfig, ClientCredentials, EmailFn } from './types.js'

/** Options common to `startDevServer` and `startLocalOAuth2Server`. */
export interface CommonServerOptions {
  /** Show the login page (true) or sign `autoLoginUser` in at once (false). */
  withLoginPage?: boolean | undefined
  /** Renders the login page instead of the default one (requires `withLoginPage`). */
  loginPageHandler?: LoginPageHandler | undefined
  /** User signed in when there is no login page. Default `dev_user`. */
  autoLoginUser?: string | undefined
  /** E-mail of a user name, added to the userinfo answer when it returns one. Default: no e-mail. */
  emailFn?: EmailFn | undefined
  /**
   * Redirect URIs the client may use, compared exactly (RFC 9700 §4.1.3); at least one. Default: only the
   * callback of the provider registered with this server's `providerOptions` (it registers itself when set
   * up); until then every authorization request is refused.
   */
  redirectUris?: string[] | undefined
  /** Logger (`stdLogger()` etc.). Default noop. Never given codes, tokens or secrets. */
  logger?: Logger | undefined
  /** Lifetime of an authorization code: ms or `'60s'`. Default 60 seconds. (Was `codeTtlMs`.) */
  codeTtl?: Duration | undefined
  /** Lifetime of an access token: ms or `'1h'`. Default 1 hour. (Was `tokenTtlMs`.) */
  tokenTtl?: Duration | undefined
  /** Lifetime of a shown login form: ms or `'10m'`. Default 10 minutes. (Was `loginTtlMs`.) */
  loginTtl?: Duration | undefined
}

type Common = Omit<AuthServerConfig, 'label' | 'host' | 'port' | 'publicHost' | 'client' | 'withLoginPage'>

/** Validates the shared options; `where` prefixes option names in errors (e.g. `startDevServer`). */
export function resolveCommon (where: string, opts: CommonServerOptions, withLoginPageDefault: boolean): Common & { withLoginPage: boolean } {
  const name = (option: string): string => `${where}.${option}`
  const withLoginPage = opts.withLoginPage ?? withLoginPageDefault
  if (typeof withLoginPage !== 'boolean') throw new OptionsError(name('withLoginPage'), 'must be a boolean')
  if (opts.loginPageHandler !== undefined) {
    if (typeof opts.loginPageHandler !== 'function') throw new OptionsError(name('loginPageHandler'), 'must be a function (request, reply, page)')
    if (!withLoginPage) throw new OptionsError(name('loginPageHandler'), 'is only used with withLoginPage: true')
  }
  if (opts.emailFn !== undefined && typeof opts.emailFn !== 'function') throw new OptionsError(name('emailFn'), 'must be a function (userName) => email')
  const logger = opts.logger ?? noopLogger
  if (typeof logger?.logf !== 'function') throw new OptionsError(name('logger'), 'must have a logf(format, ...args) method')
  const autoLoginUser = opts.autoLoginUser ?? 'dev_user'
  if (typeof autoLoginUser !== 'string' || autoLoginUser.trim() === '') throw new OptionsError(name('autoLoginUser'), 'must be a non-empty string')
  const redirectUris = opts.redirectUris
  if (redirectUris !== undefined) {
    if (!Array.isArray(redirectUris) || !redirectUris.every((u) => typeof u === 'string' && /^https?:\/\/[^#]+$/.test(u))) {
      throw new OptionsError(name('redirectUris'), 'must be a list of absolute http(s) URLs without fragment')
    }
    // Refused rather than read as "any": a code would then go wherever an authorization request says.
    if (redirectUris.length === 0) {
      throw new OptionsError(name('redirectUris'), 'must list at least one URI; leave it out to accept only the callback of the provider registered with providerOptions')
    }
  }
  return {
    withLoginPage,
    loginPageHandler: opts.loginPageHandler,
    autoLoginUser,
    emailFn: opts.emailFn,
    redirectUris: [...(redirectUris ?? [])],
    redirectUrisFixed: redirectUris !== undefined,
    logger,
    codeTtlMs: optionDuration(name('codeTtl'), opts.codeTtl, 60_000),
    tokenTtlMs: optionDuration(name('tokenTtl'), opts.tokenTtl, 3_600_000),
    loginTtlMs: optionDuration(name('loginTtl'), opts.loginTtl, 600_000)
  }
}

/** Validates given client credentials. */
export function resolveClient (option: string, client: unknown): ClientCredentials {
  const c = client as Partial<ClientCredentials> | null
  if (c === null || typeof c !== 'object' || typeof c.cid !== 'string' || c.cid === '' || typeof c.csecret !== 'string' || c.csecret === '') {
    throw new OptionsError(option, 'must be { cid, csecret } with non-empty strings')
  }
  return { cid: c.cid, csecret: c.csecret }
}

/** Validates a port (0 = any free port). */
export function resolvePort (option: string, port: unknown): number {
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) throw new OptionsError(option, 'must be an integer port 0..65535')
  return port
}

/**
 * Where to listen for a host name: `localhost` becomes 127.0.0.1 (one address, so port 0 means one port;
 * clients fall back from ::1 to it), IP literals stay, other names are listened on as given.
 */
export function listenHost (option: string, host: unknown): string {
  if (typeof host !== 'string' || host === '') throw new OptionsError(option, 'must be a non-empty host name or address')
  const bare = host.replace(/^\[(.*)\]$/, '$1')
  return bare === 'localhost' ? '127.0.0.1' : isIP(bare) !== 0 ? bare : host
}
