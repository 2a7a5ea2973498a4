/**
 * Test helpers for authenticator-app codes: an app with the auth core, a direct provider `local` and the TOTP
 * provider, answering over `inject` (test/helpers/app.ts), and the independent oracles: Debian's `zbarimg` reads
 * the secret out of the QR code the server served (its SVG rasterised by sharp), Debian's `oathtool` computes the
 * codes.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import sharp from 'sharp'
import { authPlugin, safeEqual, totpProvider, type AuthOptions, type TotpProviderOptions } from '../../index.js'
import { CookieJar, type Client } from './client.js'
import { injectApp } from './app.js'

export const URL_BASE = 'http://localhost:8080'
export const SECRET = 'totp-tests-secret-0123456789abcdef'
/** The key TOTP secrets are sealed with in the tests (32 bytes, hex). */
export const KEY = 'a1'.repeat(32)
export const OTHER_KEY = 'b2'.repeat(32)
const USERS: Record<string, string> = { alice: 'alice-secret', bob: 'bob-secret' }

export interface TotpApp { app: FastifyInstance; base: string; client(jar?: CookieJar): Client }

/** Starts an app; `totp` and `core` options are added to the defaults. Closed by the test's teardown. */
export async function startApp (t: { teardown(fn: () => unknown): void }, totp: Partial<TotpProviderOptions> = {}, core: Partial<AuthOptions> = {}): Promise<TotpApp> {
  const { app, base, client } = await injectApp(async (app) => {
    await app.register(authPlugin, {
      secret: () => SECRET,
      url: URL_BASE,
      rateLimit: { login: { max: 1000 } },
      providers: [{ kind: 'direct', name: 'local', checker: (user, passwd) => Object.hasOwn(USERS, user) && safeEqual(USERS[user]!, passwd) }],
      ...core
    })
    await app.register(totpProvider, { encryptionKey: KEY, secondFactor: ['local'], ...totp })
    app.post('/change-password', { preHandler: app.auth.recent({ within: '5m' }) }, async () => ({ status: 'changed' }))
  })
  t.teardown(() => app.close())
  return { app, base, client: (jar = new CookieJar()) => client(jar) }
}

export function xsrf (c: Client): Record<string, string> {
  return { 'x-xsrf-token': c.jar.get('XSRF-TOKEN') ?? '' }
}

export async function passwordLogin (c: Client, user: string, passwd = USERS[user]!): Promise<Response> {
  return await c.fetch('/auth/local/login', { method: 'POST', json: { user, passwd } })
}

/** Signs in with the password alone (a user without an authenticator app). */
export async function signIn (c: Client, user: string): Promise<void> {
  const res = await passwordLogin(c, user)
  if (res.status !== 200) throw new Error(`password sign-in of ${user}: ${res.status} ${await res.text()}`)
}

/** The code `oathtool` computes for `secret` (base32) at `atMs` (its `step` steps later), as an app would show it. */
export function oathtool (secret: string, atMs = Date.now(), step = 0): string {
  const at = Math.floor(atMs / 1000) + step * 30
  return execFileSync('oathtool', ['--totp', '-b', secret, '-N', `@${at}`], { encoding: 'utf8' }).trim()
}

/** What `zbarimg` reads out of the served QR code (an SVG, rasterised here because zbarimg reads images only). */
export async function readQr (svg: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-totp-'))
  try {
    const file = join(dir, 'qr.png')
    writeFileSync(file, await sharp(Buffer.from(svg), { density: 300 }).flatten({ background: '#ffffff' }).png().toBuffer())
    // zbarimg complains on stderr about a missing D-Bus, which this machine does not need.
    return execFileSync('zbarimg', ['--raw', '-q', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The base32 secret of an `otpauth://` URI. */
export function secretOf (uri: string): string {
  const secret = new URL(uri).searchParams.get('secret')
  if (secret === null) throw new Error(`no secret in ${uri}`)
  return secret
}

export interface Enrolled { secret: string; recoveryCodes: string[]; uri: string }

/** Adds an authenticator app for the signed-in client: QR → zbarimg → secret, confirmed with an oathtool code. */
export async function enrol (c: Client): Promise<Enrolled> {
  const res = await c.fetch('/auth/totp/enrol', { method: 'POST', headers: xsrf(c), json: {} })
  if (res.status !== 201) throw new Error(`enrol: ${res.status} ${await res.text()}`)
  const { qr } = await res.json() as { qr: string }
  const uri = await readQr(qr)
  const secret = secretOf(uri)
  const confirmed = await c.fetch('/auth/totp/enrol/confirm', { method: 'POST', headers: xsrf(c), json: { code: oathtool(secret) } })
  if (confirmed.status !== 200) throw new Error(`confirm: ${confirmed.status} ${await confirmed.text()}`)
  const { recoveryCodes } = await confirmed.json() as { recoveryCodes: string[] }
  return { secret, recoveryCodes, uri }
}

/** A signed-out browser of `user`, who holds a confirmed authenticator app. */
export async function withTotp (app: TotpApp, user: string): Promise<{ c: Client } & Enrolled> {
  const c = app.client()
  await signIn(c, user)
  const enrolled = await enrol(c)
  await c.fetch('/auth/logout')
  return { c, ...enrolled }
}

/** Posts the second step of a password login. */
export async function secondStep (c: Client, body: Record<string, unknown>): Promise<Response> {
  return await c.fetch('/auth/totp/login', { method: 'POST', json: body })
}
