/**
 * CLI and TV sign-in (RFC 8628): `POST {authPrefix}/device/code` gives a device client a `device_code` and a
 * `user_code`; the user opens `{authPrefix}/device` on another device, signs in there (any login method, through
 * `loginPage`) and approves or denies the named client; the client polls the token endpoint with the
 * device_code grant. Failed user codes are counted per address, per signed-in account and in all, and audited (see
 * `guessAllowed` for the limits).
 */
import { randomBytes, randomInt } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError, RateLimitedError } from '../../../lib/errors.js'
import { escapeHtml, sendPage } from '../../../lib/html.js'
import type { StateStore } from '../../../lib/state-store.js'
import type { Audit } from '../../../lib/audit/audit.js'
import type { ClientKey } from '../../../lib/throttle/client.js'
import { hashOf, inputOf, type RefreshFamilies, type TokenResponse } from './refresh-families.js'
import type { RegisteredClient } from '../base/clients.js'
import { OAuthError, invalidGrant, invalidClient, unauthorizedClient } from '../base/oauth-error.js'
import type { FieldReader, Grant } from './token-endpoint.js'
import type { Claims } from '../base/types.js'
import { userIdOf } from '../sessions/session-audit.js'
import { clientPage, pageAnswer } from './client-pages.js'
import { noteGrant } from '../base/grant-spans.js'

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
const DEVICE = 'dc:'
const USER_CODE = 'uc:'
const GUESS = 'dc-guess:'
const GUESS_ACCOUNT = 'dc-guess-user:'
const GUESS_ALL = `${GUESS}*`
const EXPIRES_S = 600
const INTERVAL_S = 5
/** RFC 8628 §6.1: no vowels (no words), no look-alikes; 20^8 ≈ 2.6e10 codes. */
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
/** Failed user codes per address, per account, and in all, per `GUESS_WINDOW_MS`. */
const GUESSES_PER_ADDRESS = 10
const GUESSES_PER_ACCOUNT = 20
const GUESSES_IN_ALL = 1000
const GUESS_WINDOW_MS = 600_000

interface DeviceRecord { c: string; uc: string; st: 'pending' | 'approved' | 'denied'; exp: number; next: number; iv: number; claims?: Claims | undefined }

export interface DeviceSignInDeps {
  store: StateStore
  clients: ReadonlyMap<string, RegisteredClient>
  families: RefreshFamilies
  audit: Audit
  clientKey: ClientKey
  session: (request: FastifyRequest) => Promise<Claims | null>
  loginPage: string
  /** `{url}{authPrefix}`. */
  base: string
  /** The app's origin: approvals come from its own pages only. */
  origin: string
}

/** `XXXX-XXXX` from the no-confusion alphabet; typed in any case, with or without the dash. */
function newUserCode (): string {
  let code = ''
  for (let i = 0; i < 8; i++) code += ALPHABET[randomInt(ALPHABET.length)]
  return code
}
const normalised = (typed: string): string => typed.toUpperCase().replace(/[^A-Z]/g, '')
const shown = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`

/** `POST /device/code`. */
export function deviceCodeHandler (d: DeviceSignInDeps, formOf: (request: FastifyRequest) => FieldReader) {
  return async function deviceCode (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const field = formOf(request)
    const client = d.clients.get(field('client_id'))
    if (client === undefined) throw invalidClient('unknown client_id')
    noteGrant(request, { client: client.id })
    if (client.kind !== 'device') throw unauthorizedClient('only a device client signs in with a device code')
    const deviceCode = randomBytes(32).toString('base64url')
    const userCode = newUserCode()
    const now = Date.now()
    const record: DeviceRecord = { c: client.id, uc: userCode, st: 'pending', exp: now + EXPIRES_S * 1000, next: now, iv: INTERVAL_S }
    // Kept past its expiry, so that a late poll hears expired_token rather than an unknown code.
    await d.store.set(DEVICE + hashOf(deviceCode), JSON.stringify(record), 2 * EXPIRES_S * 1000)
    if (!await d.store.setIfAbsent(USER_CODE + userCode, hashOf(deviceCode), EXPIRES_S * 1000)) throw new HttpError(503, 'unavailable', 'try again')
    const verification = `${d.base}/device`
    return await reply.header('cache-control', 'no-store').send({
      device_code: deviceCode,
      user_code: shown(userCode),
      verification_uri: verification,
      verification_uri_complete: `${verification}?user_code=${shown(userCode)}`,
      expires_in: EXPIRES_S,
      interval: INTERVAL_S
    })
  }
}

/**
 * `GET /device`: the code entry page for a signed-in user (others go to the sign-in page first). With a
 * `user_code` (the `verification_uri_complete` link) the page names the client asking before the user decides
 * (RFC 8628 §5.4: a user lured into approving someone else's code sees whose it is). The look-up is a guess like a
 * decision: a wrong code is counted and throttled, so the page is no oracle for codes.
 */
export function devicePageHandler (d: DeviceSignInDeps) {
  return async function devicePage (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const claims = await d.session(request)
    if (claims === null) return reply.redirect(`${d.loginPage}${d.loginPage.includes('?') ? '&' : '?'}from=${encodeURIComponent(request.url)}`, 302)
    const typed = (request.query as Record<string, unknown>).user_code
    const code = typeof typed === 'string' ? normalised(typed).slice(0, 8) : ''
    let asking = ''
    if (code !== '') {
      await guessAllowed(d, request, claims)
      const record = await pendingRecord(d, code)
      if (record === undefined) await guessFailed(d, request, claims)
      else asking = d.clients.get(record.c)?.name ?? ''
    }
    const message = code === '' ? '' : asking === '' ? 'That code is not valid: check it and try again.' : ''
    return await sendPage(reply, pageHtml(d.base, code === '' ? '' : shown(code), claims.jti, message, asking))
  }
}

/** The pending, unexpired record a user code names, without using the code up. */
async function pendingRecord (d: DeviceSignInDeps, userCode: string): Promise<DeviceRecord | undefined> {
  const hash = userCode.length === 8 ? await d.store.get(USER_CODE + userCode) : undefined
  const raw = hash === undefined ? undefined : await d.store.get(DEVICE + hash)
  const record = raw === undefined ? undefined : JSON.parse(raw) as DeviceRecord
  return record !== undefined && record.st === 'pending' && record.exp > Date.now() ? record : undefined
}

function pageHtml (base: string, code: string, xsrf: string, message: string, asking = ''): string {
  const intro = asking === ''
    ? '<p>Type the code your device shows.</p>'
    : `<p id="asking">Sign in <strong>${escapeHtml(asking)}</strong> as you? Approve only if you started this on that device and it shows this code.</p>`
  return clientPage('Sign in a device', `${intro}${message === '' ? '' : `<p id="message" role="status">${escapeHtml(message)}</p>`}
<form method="post" action="${escapeHtml(base)}/device"><input name="user_code" id="user_code" autocomplete="off" maxlength="9" value="${escapeHtml(code)}" placeholder="XXXX-XXXX" required>
<input type="hidden" name="xsrf" value="${escapeHtml(xsrf)}"><button name="action" value="approve" id="approve">Approve</button><button name="action" value="deny" id="deny">Deny</button></form>`)
}

/** `POST /device`: approves or denies the code's client for the signed-in user. */
export function deviceDecisionHandler (d: DeviceSignInDeps, formOf: (request: FastifyRequest) => FieldReader) {
  return async function deviceDecision (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const { claims, field, approve: approved } = await pageAnswer(d, request, formOf, 'a device is approved')
    const userCode = normalised(field('user_code'))
    await guessAllowed(d, request, claims)
    const hash = userCode.length === 8 ? await d.store.take(USER_CODE + userCode) : undefined
    const raw = hash === undefined ? undefined : await d.store.get(DEVICE + hash)
    const record = raw === undefined ? undefined : JSON.parse(raw) as DeviceRecord
    if (hash === undefined || record === undefined || record.st !== 'pending' || record.exp <= Date.now()) {
      await guessFailed(d, request, claims)
      if (d.audit.on) d.audit.emit(request, 'device.denied', { reason: 'unknown_code', userId: userIdOf(claims), clientId: undefined })
      return await sendPage(reply, pageHtml(d.base, '', claims.jti, 'That code is not valid: check it and try again.'), 400)
    }
    const client = d.clients.get(record.c)!
    const next: DeviceRecord = approved ? { ...record, st: 'approved', claims } : { ...record, st: 'denied' }
    await d.store.set(DEVICE + hash, JSON.stringify(next), Math.max(1000, record.exp - Date.now() + EXPIRES_S * 1000))
    if (d.audit.on) d.audit.emit(request, approved ? 'device.approved' : 'device.denied', { reason: approved ? 'user' : 'denied', userId: userIdOf(claims), clientId: client.id })
    const text = approved ? `${client.name} is signed in. You can return to it.` : `${client.name} was not signed in.`
    return await sendPage(reply, pageHtml(d.base, '', claims.jti, text))
  }
}

/** The counters a wrong code of this request adds to: its address's, its signed-in account's, and everyone's. */
function guessKeys (d: DeviceSignInDeps, request: FastifyRequest, claims: Claims): [address: string, account: string, all: string] {
  return [`${GUESS}${d.clientKey(request)}`, `${GUESS_ACCOUNT}${userIdOf(claims) ?? claims.jti}`, GUESS_ALL]
}

/**
 * Whether this request may try a user code, right or wrong (a refused one is not even looked up: the page is no
 * oracle). Refused (429) past 10 wrong codes from its address or 20 from its account in 10 minutes: one account on
 * many addresses counts once. Past 1,000 wrong codes in all, only a requester with no wrong code of its own in the
 * window (neither its address nor its account) may try, and its first wrong code puts it under the cap too: a user
 * typing the code their device shows still gets in while someone guesses, and a guesser needs a new account on a
 * new address for every guess past the cap, instead of the cap refusing every user of the app for its window.
 */
async function guessAllowed (d: DeviceSignInDeps, request: FastifyRequest, claims: Claims): Promise<void> {
  const counts = (await Promise.all(guessKeys(d, request, claims).map(async (key) => await d.store.get(key)))).map((v) => Number(v ?? 0))
  const [address, account, all] = counts as [number, number, number]
  if (address >= GUESSES_PER_ADDRESS || account >= GUESSES_PER_ACCOUNT || (all >= GUESSES_IN_ALL && address + account > 0)) {
    if (d.audit.on) d.audit.emit(request, 'rate_limited', { reason: 'device_code', retryAfterMs: GUESS_WINDOW_MS })
    throw new RateLimitedError('too many wrong device codes: wait and try again', GUESS_WINDOW_MS)
  }
}

async function guessFailed (d: DeviceSignInDeps, request: FastifyRequest, claims: Claims): Promise<void> {
  const store = d.store
  if (store.increment === undefined) return
  await Promise.all(guessKeys(d, request, claims).map(async (key) => await store.increment!(key, GUESS_WINDOW_MS)))
}

/** The device_code grant: polled by the device until the user decided. */
export function deviceCodeGrant (d: DeviceSignInDeps): Grant {
  return {
    kinds: new Set(['device']),
    async exchange (request: FastifyRequest, client: RegisteredClient, field: FieldReader): Promise<TokenResponse> {
      const key = DEVICE + hashOf(field('device_code'))
      const raw = await d.store.get(key)
      const record = raw === undefined ? undefined : JSON.parse(raw) as DeviceRecord
      if (record === undefined || record.c !== client.id) throw invalidGrant('unknown device_code')
      const now = Date.now()
      if (record.exp <= now) throw new OAuthError(400, 'expired_token', 'the device code has expired: start again')
      if (record.st === 'denied') throw new OAuthError(400, 'access_denied', 'the user denied the sign-in')
      if (now < record.next) {
        await d.store.set(key, JSON.stringify({ ...record, iv: record.iv + 5, next: now + (record.iv + 5) * 1000 }), record.exp - now + EXPIRES_S * 1000)
        throw new OAuthError(400, 'slow_down', `poll at most every ${record.iv + 5} s`)
      }
      if (record.st === 'pending') {
        await d.store.set(key, JSON.stringify({ ...record, next: now + record.iv * 1000 }), record.exp - now + EXPIRES_S * 1000)
        throw new OAuthError(400, 'authorization_pending', 'the user has not decided yet')
      }
      if (await d.store.take(key) === undefined) throw invalidGrant('unknown device_code')
      const claims = record.claims!
      return (await d.families.issue(request, client, inputOf(claims), claims.auth_time, 'device_code')).response
    }
  }
}
