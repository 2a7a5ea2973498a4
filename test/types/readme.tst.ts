/**
 * Every code example of the README, compiled (not run) by `npm run typecheck`: the lines between the markers
 * are the README's own, so an example that stops compiling fails the build. test/docs/readme-examples.test.ts
 * checks that each README example appears here, in the other type tests or in the scratch apps, line for line. Names an example
 * takes from its surroundings (`checkPassword`, `accounts`, …) are declared first.
 */
import Fastify, { type RouteHandlerMethod } from 'fastify'
import cookie from '@fastify/cookie'
import authPlugin, { directProvider, oauth2Provider, passkeyProvider, totpProvider } from '../../index.js'
import { startLocalOAuth2Server } from '../../servers/index.js'
import { providerKit } from '../../providers/index.js'
import { argon2Hash, argon2Verify, bcryptHash, bcryptVerify, decodeArgon2Secret, pingPlugin, sanitizeUrl, SECRET_KEY_WORDS } from '../../toolkit.js'

declare function checkPassword (user: string, passwd: string): Promise<boolean>
declare const accounts: { find (id: string): Promise<{ role: string; admin: boolean } | undefined> }
declare const reports: RouteHandlerMethod
declare const adminPage: RouteHandlerMethod
declare const secret: () => string
declare const url: string
declare const password: string
declare const attempt: string
declare const document: { cookie: string }

export async function tutorial (): Promise<void> {
  // README: Five-minute tutorial (its own checkPassword, shadowing the one declared above for other examples)
  const aliceHash = process.env.ALICE_HASH
  if (!aliceHash) throw new Error('ALICE_HASH is not set: npx fastify-gatehouse hash --bcrypt --env ALICE_HASH >> .env')
  const hashes = new Map([['alice', aliceHash]])
  async function checkPassword (user: string, passwd: string): Promise<boolean> {
    const hash = hashes.get(user)
    return hash !== undefined && await bcryptVerify(passwd, hash)
  }

  const app = Fastify({ logger: true })
  await app.register(authPlugin, {
    secret: process.env.AUTH_SECRET!,                     // 32+ bytes; a function (aud) => secret may differ per site
    url: 'http://localhost:8080'                          // public base address: https://example.com in production
  })
  await app.register(directProvider, { name: 'local', checker: checkPassword })

  // protect routes with hooks
  app.get('/api/me', { onRequest: app.auth.authenticate }, async (req) => req.user)
  app.get('/api/admin', { onRequest: app.auth.admin }, async (req) => ({ hello: req.user!.name }))
  await app.listen({ port: 8080 })
}

export async function tutorialAdmin (): Promise<void> {
  // README: the tutorial's registration with a claims updater that makes alice an admin
  const app = Fastify()
  await app.register(authPlugin, {
    secret: process.env.AUTH_SECRET!,
    url: 'http://localhost:8080',
    claimsUpdater: (claims) => {                          // your records decide; here, alice is an admin
      if (claims.user?.name === 'alice') claims.user = { ...claims.user, attrs: { ...claims.user.attrs, admin: true } }
      return claims
    }
  })
}

export async function selfImplemented (): Promise<void> {
  // README: Adding a provider
  const app = Fastify()
  await app.register(authPlugin, { secret: () => 'a-long-random-secret-of-32-chars-or-more', url: 'https://example.com' })
  await app.register(async (scope) => {
    const kit = providerKit(scope)
    kit.mount({
      name: 'magic',
      // Behind the prelude already: not cross-site, counted, `login` read and checked.
      login: async (request, reply, login) => await kit.completeLogin(request, reply, { user: { name: 'ann', id: 'magic_ann' }, ...login })
    })
  })
}

export async function browserCode (): Promise<void> {
  // README: the XSRF header from browser code
  const xsrf = document.cookie.match(/XSRF-TOKEN=([^;]+)/)?.[1]
  await fetch('/api/me', { headers: { 'X-XSRF-TOKEN': xsrf ?? '' } })
}

export async function readingTheUser (): Promise<void> {
  const app = Fastify()
  await app.register(authPlugin, { secret, url })
  // README: Reading the user
  app.get('/', { preHandler: app.auth.optionalUser }, async (req) => (req.user ? `hello ${req.user.name}` : 'hello, guest'))
}

export async function passkeys (): Promise<void> {
  const app = Fastify()
  await app.register(authPlugin, { secret, url })
  // README: Login methods, passkeys
  app.register(passkeyProvider, { store: 'redis://…', secondFactor: ['local'] })
}

declare const changePassword: RouteHandlerMethod

export async function totp (): Promise<void> {
  const app = Fastify()
  await app.register(authPlugin, { secret, url })
  // README: Authenticator apps (TOTP) and recovery codes
  app.register(totpProvider, { encryptionKey: process.env.TOTP_KEY!, store: 'redis://…', secondFactor: ['local'] })
  app.post('/account/password', { preHandler: app.auth.stepUp({ within: '5m' }) }, changePassword)
  const encryptionKey = process.env.TOTP_KEY!
  // README: the inline example of the same section
  app.register(totpProvider, { encryptionKey, store: 'redis://…', secondFactor: ['local'] })
}

export async function rolesAndAdmin (): Promise<void> {
  const app = Fastify()
  // README: Roles and admin
  await app.register(authPlugin, {
    secret, url,
    claimsUpdater: async (claims) => {
      if (claims.user === undefined) return claims
      const account = await accounts.find(claims.user.id)        // your store; ids look like `local_<sha1>`
      if (account === undefined) return claims
      claims.user = { ...claims.user, role: account.role, attrs: { ...claims.user.attrs, admin: account.admin } }
      return claims
    }
  })
  app.get('/api/reports', { preHandler: app.auth.rbac(['editor', 'admin']) }, reports)   // 401 signed out, 403 other roles
  app.get('/api/admin', { preHandler: app.auth.admin }, adminPage)                        // 403 unless attrs.admin is true
}

export async function esModules (): Promise<void> {
  // README: ES modules and CommonJS (both forms run for real in test/package/scratch-app.test.ts)
  const app = Fastify()
  await app.register(pingPlugin)
  await app.register(authPlugin, { secret, url })
}

export async function registrationOrder (): Promise<void> {
  const app = Fastify()
  // README: Registration order
  await app.register(cookie, { secret: process.env.COOKIE_SECRET })   // for your own routes' cookies
  await app.register(authPlugin, { secret, url })                      // before or after it: either works
}

export async function optionGroups (): Promise<void> {
  const app = Fastify()
  // README: Options of authPlugin
  await app.register(authPlugin, {
    secret: () => process.env.SESSION_SECRET!,
    url: 'https://example.com',
    session: { tokenDuration: '15m', maxAge: '31d', idleTimeout: '8h' },
    cookies: { sameSite: 'Strict' },
    xsrf: { headerName: 'X-CSRF-Token' },
    tokenSources: { query: false },
    avatar: { store: 'file:///var/lib/app/avatars' },
    providers: [{ kind: 'direct', name: 'local', checker: async (user, passwd) => user === 'admin' && passwd === 'secret' }]
  })
}

export function logging (): void {
  // docs/guide/logging.md: a logger that is not pino
  const secrets = new Set([...SECRET_KEY_WORDS, 'code', 'state'])
  const app = Fastify({ logger: { serializers: { req: (req) => ({ method: req.method, url: sanitizeUrl(req.url, secrets) }) } } })
  void app
}

export async function localServer (): Promise<void> {
  const app = Fastify()
  await app.register(authPlugin, { secret, url })
  // README: the local OAuth2 server's provider options
  const { providerOptions } = await startLocalOAuth2Server({ url: 'http://localhost:9096' })
  await app.register(oauth2Provider, { name: 'custom', ...providerOptions })
}

export async function passwordHashes (): Promise<boolean> {
  // README: Password hashes
  const { hash, salt } = await argon2Hash(password)            // base64 strings: store both
  const stored = decodeArgon2Secret(hash, salt)                  // once, at startup: checks and decodes them
  const ok: boolean = await argon2Verify(attempt, stored)        // per login, constant-time

  const bhash = await bcryptHash(password)                       // cost 10; refuses passwords over 72 bytes
  const ok2: boolean = await bcryptVerify(attempt, bhash)
  return ok && ok2
}
