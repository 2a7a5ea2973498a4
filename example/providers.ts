/**
 * Every login method of the demo: `local` (direct), `dev` (fake OAuth2 server), `email` (verified),
 * `custom` (through a local OAuth2 server), and, when configured, `oidc`, the built-ins, Apple and Telegram; last,
 * `passkey`: passkey sign-in, and the second factor of `local` for users who added a passkey.
 * Background services started here are handed to `onStop`, so they stop whether the demo closes or fails to start.
 */
import type { FastifyInstance } from 'fastify'
import { timingSafeEqual } from 'node:crypto'
import {
  devProvider, emailProvider, oauth2Provider, passkeyProvider, telegramProvider, totpProvider, type ClaimsUpdater, type CredChecker
} from '../index.js'
import { appleKeyFromFile, discoverOidc, SmtpSender, type Sender } from '../providers/index.js'
import type { Logger } from '../compat.js'
import { startLocalOAuth2Server, type RunningOAuth2Server } from '../servers/index.js'
import { DemoError, type DemoConfig } from './config.js'
import { portError } from './listen.js'

/** Users of the direct provider `local`: password, role, admin flag. */
const USERS: Record<string, { passwd: string; role?: string; admin?: boolean }> = {
  alice: { passwd: 'alice-secret', role: 'editor' },
  admin: { passwd: 'admin-secret', admin: true }
}

export const checkLocalUser: CredChecker = (user, passwd) => Object.hasOwn(USERS, user) && sameText(USERS[user]!.passwd, passwd)

/** Compares a password in constant time (for equal lengths; a length differs at once, which tells nothing). */
function sameText (a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Roles and the admin flag of `local` users; a real application would read its own user database here. */
export const addDemoRoles: ClaimsUpdater = (claims) => {
  const u = claims.user
  const entry = u !== undefined && u.id.startsWith('local_') && Object.hasOwn(USERS, u.name) ? USERS[u.name] : undefined
  if (u === undefined || entry === undefined) return claims
  claims.user = { ...u, ...(entry.role !== undefined ? { role: entry.role } : {}), ...(entry.admin === true ? { attrs: { ...u.attrs, admin: true } } : {}) }
  return claims
}

export interface DemoServices {
  /** The dev provider's fake server, once the app is ready (its real URL is needed for port 0 and the health check). */
  dev: { server: RunningOAuth2Server | undefined }
  /** URL of the local OAuth2 server behind `custom`. */
  customUrl: string
}

export interface ProviderContext {
  cfg: DemoConfig
  /** The public URL of the demo. */
  url: string
  logger: Logger
  /** Where the console email sender writes confirmation messages. */
  out: (line: string) => void
  warn: (line: string) => void
  /**
   * Takes a stop function for something started outside Fastify's lifecycle, at once: a later provider
   * failing must still stop it.
   */
  onStop: (stop: () => Promise<void>) => void
}

/** Registers every provider except `local` (which comes in the root options). Call before the app is ready. */
export async function addDemoProviders (app: FastifyInstance, ctx: ProviderContext): Promise<DemoServices> {
  const { auth } = app
  const { cfg } = ctx

  // dev: any user name signs in on the fake server's page; the server follows the app's lifecycle.
  const dev: DemoServices['dev'] = { server: undefined }
  await app.register(devProvider, {
    port: cfg.devPort,
    logger: ctx.logger,
    emailFn: (name) => `${name}@dev.example`,
    onServer: (server) => { dev.server = server }
  })

  auth.addVerifProvider('email', emailTemplate(ctx.url), emailSender(ctx))
  // The same sender with a typed 6-digit code instead of a link (for phones and native apps).
  await app.register(emailProvider, { name: 'emailcode', template: 'Your gatehouse demo sign-in code: {{.Code}} (10 minutes)', sender: emailSender(ctx), code: true })

  // custom: the embeddable local OAuth2 server, with its login page, registered as any third-party server. It
  // sends codes to our callback only, as a real provider does with the callback registered in its console.
  const local = await startLocalOAuth2Server({
    url: `http://localhost:${cfg.customPort}`,
    withLoginPage: true,
    redirectUris: [`${ctx.url}/auth/custom/callback`],
    logger: ctx.logger
  })
    .catch((err: unknown) => { throw portError(err, cfg.customPort, 'CUSTOM_AUTH_PORT') })
  ctx.onStop(local.close)
  await app.register(oauth2Provider, { name: 'custom', ...local.providerOptions })

  if (cfg.oidc !== undefined) {
    // Discovered before registering: an issuer that cannot be read leaves the demo without `oidc`, with a warning.
    const discovered = await discoverOidc(cfg.oidc.issuer).catch((err: unknown) => { ctx.warn(`provider oidc is off: ${(err as Error).message}`) })
    if (discovered !== undefined) await app.register(oauth2Provider, { name: 'oidc', cid: cfg.oidc.cid, csecret: cfg.oidc.csecret, ...discovered })
  }
  for (const b of cfg.builtins) auth.addProvider(b.name, b.cid, b.csecret)
  if (cfg.apple !== undefined) {
    const { keyFile, ...config } = cfg.apple
    await auth.addAppleProvider(config, appleKeyFromFile(keyFile)).catch((err: unknown) => { throw new DemoError((err as Error).message) })
  }
  if (cfg.telegram !== undefined) {
    // Polls the Bot API while the app runs; the app's close stops the poller.
    await app.register(telegramProvider, { token: cfg.telegram.token, ...(cfg.telegram.apiUrl !== undefined ? { apiUrl: cfg.telegram.apiUrl } : {}) })
  }
  // Passkeys: added by a signed-in user on the page; then they sign in alone, and a `local` password login of a
  // user who has one waits for it.
  await app.register(passkeyProvider, { store: cfg.passkeyStore, rpName: 'fastify-gatehouse demo', secondFactor: ['local'] })
  // Authenticator apps: added on the page; then a `local` password login asks for a code (or the passkey).
  await app.register(totpProvider, { encryptionKey: cfg.totpKey, store: cfg.totpStore, issuer: 'gatehouse demo', secondFactor: ['local'] })
  return { dev, customUrl: local.url }
}

function emailTemplate (url: string): string {
  return `Hello {{.User}}, confirm your sign-in to the gatehouse demo: ${url}/auth/email/login?token={{.Token}}\n` +
    'Or paste this token into the page: {{.Token}}'
}

/** Over SMTP when configured; otherwise the message is printed, as a development mail catcher would. */
function emailSender (ctx: ProviderContext): Sender {
  const smtp = ctx.cfg.smtp
  if (smtp !== undefined) return new SmtpSender({ ...smtp, subject: 'Your gatehouse demo sign-in' })
  return { send (address, text) { ctx.out(`email to ${address}: ${text.replace(/\n/g, ' | ')}`) } }
}
