/**
 * The demo's settings, read once from the environment. Every problem is a `DemoError` whose message
 * is the one line the demo prints before it exits, so a typo in a variable never ends in a stack trace.
 */
import { createHash, randomBytes } from 'node:crypto'

export interface DemoEnv { [key: string]: string | undefined }

/** A start-up failure with a one-line, user-facing message (`demo: …` is added when printed). */
export class DemoError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'DemoError'
  }
}

export interface OAuth2Credentials { name: string; cid: string; csecret: string }

export interface DemoConfig {
  /** Port of the demo itself (0: any free port). */
  port: number
  /** Public URL; undefined means `http://localhost:<bound port>`. */
  url: string | undefined
  secret: string
  /** Port of the dev provider's fake OAuth2 server. */
  devPort: number
  /** Port of the local OAuth2 server behind the `custom` provider. */
  customPort: number
  /** Port of the SimpleSAMLphp IdP behind `saml`, when it is installed (0: any free port). */
  samlIdpPort: number
  avatarStore: string
  /** Where passkeys live (`memory://`, `bolt://`, or a Redis address as for `stateStore`). */
  passkeyStore: string
  /**
   * The state store every instance shares (`STATE_STORE`): one-time tokens, revocations, throttling, passkey
   * challenges. `memory://`, `redis://…`, `rediss://…`, `redis-cluster://…` or `redis-sentinel://…/<master>`.
   */
  stateStore: string
  /** Where authenticator-app secrets live (`memory://`, `bolt://`, `redis://`). */
  totpStore: string
  /** The key those secrets are sealed with (`TOTP_KEY`, 32 bytes as hex or base64); derived from the secret when unset. */
  totpKey: string
  adminPasswd: string | undefined
  smtp: { host: string; port: number; username?: string; password?: string; from: string; startTLS: boolean } | undefined
  oidc: { issuer: string; cid: string; csecret: string } | undefined
  /** Built-in OAuth2 providers with `<NAME>_CID` and `<NAME>_CSEC` set. */
  builtins: OAuth2Credentials[]
  /** Apple sign-in: `APPLE_CID`, `APPLE_TEAM_ID`, `APPLE_KEY_ID` and `APPLE_KEY_FILE` (the .p8 key). */
  apple: { clientId: string; teamId: string; keyId: string; keyFile: string } | undefined
  telegram: { token: string; apiUrl: string | undefined } | undefined
  /** Things the user should know (printed as warnings at start). */
  warnings: string[]
}

/** Reads the settings; `builtinNames` are the built-in providers that can be switched on by credentials. */
export function readConfig (env: DemoEnv, builtinNames: readonly string[]): DemoConfig {
  const warnings: string[] = []
  let secret = text(env, 'AUTH_SECRET')
  if (secret === undefined) {
    secret = randomBytes(32).toString('base64url')
    warnings.push('AUTH_SECRET is not set: using a random secret, sessions end when the demo restarts')
  }
  const url = text(env, 'AUTH_URL')
  if (url !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(url)) throw new DemoError(`AUTH_URL must be an http(s) origin like http://localhost:8080, got "${url}"`)

  const smtpHost = text(env, 'SMTP_HOST')
  const smtpPort = text(env, 'SMTP_PORT')
  let smtp: DemoConfig['smtp']
  if (smtpHost !== undefined || smtpPort !== undefined) {
    if (smtpHost === undefined || smtpPort === undefined) throw new DemoError('SMTP_HOST and SMTP_PORT must be set together')
    smtp = { host: smtpHost, port: port(env, 'SMTP_PORT', 25), from: text(env, 'SMTP_FROM') ?? 'gatehouse-demo@localhost', startTLS: env.SMTP_STARTTLS === '1' }
    const username = text(env, 'SMTP_USERNAME')
    const password = text(env, 'SMTP_PASSWORD')
    if (username !== undefined) smtp.username = username
    if (password !== undefined) smtp.password = password
  }

  const issuer = text(env, 'OIDC_ISSUER')
  const oidcId = text(env, 'OIDC_CLIENT_ID')
  const oidcSecret = text(env, 'OIDC_CLIENT_SECRET')
  let oidc: DemoConfig['oidc']
  if (issuer !== undefined && oidcId !== undefined && oidcSecret !== undefined) oidc = { issuer, cid: oidcId, csecret: oidcSecret }
  else if (issuer !== undefined || oidcId !== undefined || oidcSecret !== undefined) {
    warnings.push('provider oidc is off: OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET must all be set')
  }

  const builtins: OAuth2Credentials[] = []
  for (const name of builtinNames) {
    const key = name.toUpperCase()
    const cid = text(env, `${key}_CID`)
    const csecret = text(env, `${key}_CSEC`)
    if (cid !== undefined && csecret !== undefined) builtins.push({ name, cid, csecret })
    else if (cid !== undefined || csecret !== undefined) warnings.push(`provider ${name} is off: ${key}_CID and ${key}_CSEC must both be set`)
  }

  const appleVars = ['APPLE_CID', 'APPLE_TEAM_ID', 'APPLE_KEY_ID', 'APPLE_KEY_FILE'].map((n) => text(env, n))
  const [clientId, teamId, keyId, keyFile] = appleVars
  let apple: DemoConfig['apple']
  if (clientId !== undefined && teamId !== undefined && keyId !== undefined && keyFile !== undefined) apple = { clientId, teamId, keyId, keyFile }
  else if (appleVars.some((v) => v !== undefined)) warnings.push('provider apple is off: APPLE_CID, APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_KEY_FILE must all be set')

  const token = text(env, 'TELEGRAM_TOKEN')
  return {
    port: port(env, 'PORT', 8080),
    url: url?.replace(/\/$/, ''),
    secret,
    devPort: port(env, 'DEV_AUTH_PORT', 8084),
    customPort: port(env, 'CUSTOM_AUTH_PORT', 9096),
    samlIdpPort: port(env, 'SAML_IDP_PORT', 0),
    avatarStore: text(env, 'AVATAR_STORE') ?? 'bolt://./var/avatars.db',
    passkeyStore: text(env, 'PASSKEY_STORE') ?? 'memory://',
    stateStore: text(env, 'STATE_STORE') ?? 'memory://',
    totpStore: text(env, 'TOTP_STORE') ?? 'memory://',
    // A demo convenience: the same secret gives the same key across restarts. Production sets its own TOTP_KEY.
    totpKey: text(env, 'TOTP_KEY') ?? createHash('sha256').update(`gatehouse-demo-totp\0${secret}`).digest('hex'),
    adminPasswd: text(env, 'ADMIN_PASSWD'),
    smtp,
    oidc,
    builtins,
    apple,
    telegram: token === undefined ? undefined : { token, apiUrl: text(env, 'TELEGRAM_API_URL') },
    warnings
  }
}

/** A set, non-empty variable (surrounding spaces dropped). */
function text (env: DemoEnv, name: string): string | undefined {
  const v = env[name]?.trim()
  return v === undefined || v === '' ? undefined : v
}

function port (env: DemoEnv, name: string, dflt: number): number {
  const v = text(env, name)
  if (v === undefined) return dflt
  if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new DemoError(`${name} must be a port number 0..65535, got "${v}"`)
  return Number(v)
}
