/**
 * Native app sign-in (RFC 8252): `GET {authPrefix}/authorize` opened in the system browser, and the
 * `authorization_code` grant at the token endpoint. A signed-in browser is sent back to the client's registered
 * redirect URI with a one-time code (60 s, bound to the client, the redirect URI and the PKCE S256 challenge); a
 * browser without a session goes to the app's sign-in page first (`loginPage`, with `from` back here), so that
 * every login method works.
 *
 * An unknown client or a redirect URI it did not register is answered here (400 JSON) and never redirected to:
 * no open redirect. The code is kept hashed; a refused exchange consumes nothing, and a code presented again after
 * its exchange ends the family it bought (RFC 6749 §4.1.2).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { pkceChallenge } from '../../lib/pkce.js'
import type { StateStore } from '../../lib/state-store.js'
import { allowsRedirect, type RegisteredClient } from './clients.js'
import { hashOf, inputOf, type RefreshFamilies, type TokenResponse } from './refresh-families.js'
import { invalidGrant } from './oauth-error.js'
import type { FieldReader, Grant } from './token-endpoint.js'
import type { Claims } from './types.js'

const CODE = 'ac:'
const CODE_USED = 'ac-used:'
const CODE_TTL_MS = 60_000
/** RFC 7636 §4.1: 43-128 characters of the unreserved set (the challenge of S256 is always 43). */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/
const CHALLENGE = /^[A-Za-z0-9\-_]{43}$/
const MAX_PARAM = 2048

interface CodeRecord { c: string; r: string; ch: string; claims: Claims }

export interface NativeSignInDeps {
  store: StateStore
  clients: ReadonlyMap<string, RegisteredClient>
  families: RefreshFamilies
  /** The browser's cookie session, verified (signature, expiry, revocation), or null. */
  session: (request: FastifyRequest) => Promise<Claims | null>
  /** Where a browser without a session signs in (absolute URL of the app's page). */
  loginPage: string
  /** The issuer, sent back as `iss` (RFC 9207). */
  issuer: string
}

/** `GET /authorize`: validates the request, then redirects to the client with a code (or to the sign-in page). */
export function authorizeHandler (d: NativeSignInDeps) {
  return async function authorize (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const q = (request.query ?? {}) as Record<string, unknown>
    const param = (name: string): string | undefined => {
      const v = q[name]
      if (v === undefined || v === '') return undefined
      if (typeof v !== 'string' || v.length > MAX_PARAM) throw new HttpError(400, 'bad request', `${name} is repeated or too long`, ErrorCodes.OAUTH)
      return v
    }
    // Client and redirect URI first: until both are known good, nothing is redirected anywhere.
    const client = d.clients.get(param('client_id') ?? '')
    if (client === undefined || client.kind === 'device') throw new HttpError(400, 'bad request', 'unknown client_id, or a client that does not sign in with a redirect', ErrorCodes.OAUTH)
    const redirectUri = param('redirect_uri')
    if (redirectUri === undefined || !allowsRedirect(client, redirectUri)) throw new HttpError(400, 'bad request', 'redirect_uri is not registered for this client', ErrorCodes.OAUTH)
    const state = param('state')
    const back = (fields: Record<string, string>): FastifyReply => reply.redirect(withParams(redirectUri, { ...fields, ...(state === undefined ? {} : { state }), iss: d.issuer }), 302)
    if (param('response_type') !== 'code') return back({ error: 'unsupported_response_type', error_description: 'response_type must be code' })
    if (param('code_challenge_method') !== 'S256') return back({ error: 'invalid_request', error_description: 'PKCE with code_challenge_method=S256 is required' })
    const challenge = param('code_challenge')
    if (challenge === undefined || !CHALLENGE.test(challenge)) return back({ error: 'invalid_request', error_description: 'code_challenge must be an S256 challenge' })

    const claims = await d.session(request)
    if (claims === null) return reply.redirect(withParams(d.loginPage, { from: request.url }), 302)
    const code = randomBytes(32).toString('base64url')
    const record: CodeRecord = { c: client.id, r: redirectUri, ch: challenge, claims }
    await d.store.set(CODE + hashOf(code), JSON.stringify(record), CODE_TTL_MS)
    return back({ code })
  }
}

/** The `authorization_code` grant: the code, its redirect URI and the PKCE verifier, for a first pair. */
export function authorizationCodeGrant (d: NativeSignInDeps): Grant {
  return {
    kinds: new Set(['native', 'spa']),
    async exchange (request: FastifyRequest, client: RegisteredClient, field: FieldReader): Promise<TokenResponse> {
      const code = field('code')
      const redirectUri = field('redirect_uri')
      const verifier = field('code_verifier')
      const hash = hashOf(code)
      const raw = await d.store.get(CODE + hash)
      if (raw === undefined) return await replayed(d, request, client, hash)
      const record = JSON.parse(raw) as CodeRecord
      if (record.c !== client.id) throw invalidGrant('the code was issued to another client')
      if (record.r !== redirectUri) throw invalidGrant('redirect_uri differs from the authorization request')
      if (!VERIFIER.test(verifier) || !sameText(pkceChallenge(verifier), record.ch)) throw invalidGrant('the code_verifier does not match the code_challenge')
      if (await d.store.take(CODE + hash) === undefined) throw invalidGrant('the code was already used')
      const pair = await d.families.issue(request, client, inputOf(record.claims), record.claims.auth_time, 'authorization_code')
      await d.store.set(CODE_USED + hash, pair.family, CODE_TTL_MS * 10)
      return pair.response
    }
  }
}

/** A code that is not live: one already exchanged ends the family it bought; anything else is unknown. */
async function replayed (d: NativeSignInDeps, request: FastifyRequest, client: RegisteredClient, hash: string): Promise<never> {
  const family = await d.store.get(CODE_USED + hash)
  if (family !== undefined) await d.families.endFamily(request, client, family)
  throw invalidGrant(family === undefined ? 'unknown or expired code' : 'the code was already used: the tokens it bought are revoked')
}

function sameText (a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** `uri` with `fields` added to its query (a private-use scheme URI included). */
function withParams (uri: string, fields: Record<string, string>): string {
  const url = new URL(uri)
  for (const [k, v] of Object.entries(fields)) url.searchParams.set(k, v)
  return url.href
}
