/**
 * The types the OAuth2 authorization server's modules share (configuration, pending requests, codes, tokens and
 * the route context). Kept apart from server.ts so that the route modules (authorize.ts, token.ts) and the app
 * that registers them do not import each other.
 */
import type { Logger } from '../lib/logging/logger.js'
import type { LoginPageHandler } from './login-page.js'
import type { SecretStore } from './secret-store.js'

/** Client credentials: client id and secret, named as the OAuth2 provider options name them. */
export interface ClientCredentials { cid: string; csecret: string }

/** Returns the e-mail of a user name, or undefined for none. */
export type EmailFn = (userName: string) => string | undefined | Promise<string | undefined>

/** Configuration of the core, after each flavour has validated its options and applied its defaults. */
export interface AuthServerConfig {
  /** Label in log lines, e.g. `dev-oauth2`. */
  label: string
  /** Address to listen on and port (0: any free port). */
  host: string
  port: number
  /** Host name in the returned URL (e.g. `localhost` while listening on 127.0.0.1). */
  publicHost: string
  /** The one client this server knows. */
  client: ClientCredentials
  /** Redirect URIs the client may use (exact match); empty refuses every authorization request. */
  redirectUris: string[]
  /**
   * Whether `redirectUris` was given. When not, the provider registered with `providerOptions` adds its own
   * callback (the only URI it will ever use); when given, the list is final.
   */
  redirectUrisFixed: boolean
  withLoginPage: boolean
  loginPageHandler: LoginPageHandler | undefined
  /** The user signed in without a page when `withLoginPage` is false. */
  autoLoginUser: string
  emailFn: EmailFn | undefined
  logger: Logger
  /** Lifetimes: pending login (form shown, not yet submitted), authorization code, access token. */
  loginTtlMs: number
  codeTtlMs: number
  tokenTtlMs: number
}

/** A pending authorization request: everything the code will carry once a user is known. */
export interface AuthorizationRequest {
  redirectUri: string
  /** Whether redirect_uri was in the request; then the token request must repeat it (RFC 6749 §4.1.3). */
  redirectUriGiven: boolean
  scopes: string[]
  state: string | undefined
  /** The PKCE S256 challenge (required: the token request must bring its verifier). */
  codeChallenge: string
  nonce: string | undefined
  /** Browser binding of the login form (cookie value); the form only works in the browser it was shown in. */
  browser: string
}

export interface CodeRecord extends AuthorizationRequest {
  userName: string
  /** Set at the first presentation: a second one is a replay and revokes the token issued. */
  spent: boolean
  accessToken: string | undefined
}

export interface TokenRecord { userName: string; scopes: string[] }

/** What the route modules share. */
export interface ServerContext {
  config: AuthServerConfig
  /** Base URL once listening. */
  url: string
  /** Name of the browser-binding cookie: per port, since cookies do not tell ports apart. */
  browserCookie: string
  logins: SecretStore<AuthorizationRequest>
  codes: SecretStore<CodeRecord>
  tokens: SecretStore<TokenRecord>
}

/** A running server. */
export interface RunningAuthServer {
  /** Base URL with the real bound port, no trailing slash. */
  url: string
  close(): Promise<void>
  /** Accepts `uri` as a redirect URI from now on, unless the list was given at start (then it only warns). */
  registerRedirectUri(uri: string): void
}
