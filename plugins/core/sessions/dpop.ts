/**
 * DPoP (RFC 9449) for the registered clients: what a request's proof must say about that very request, at the token
 * endpoint (where a proof binds the tokens issued to its key) and at the protected routes (where a bound token is
 * taken only with a proof of its key). The proof itself is verified by dpop-proof.ts; server nonces are
 * dpop-nonce.ts's.
 *
 * A proof is checked in RFC 9449 §4.3's order and its `jti` is spent last, once everything else passed: one
 * `DPoP` header, at most 8 KB; a valid JWS of an allowed asymmetric algorithm with a public `jwk`; the nonce when
 * one is asked for; `iat` within `dpop.proofMaxAge` (5 s of skew either way); `htm` the request's method; `htu` the
 * request's URL on the configured public `url` (never the Host header), compared without query and fragment; `ath`
 * the hash of the access token presented with it; then `jti` unused, on the state store shared by every instance.
 */
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { StateStore } from '../../../lib/state-store.js'
import type { Audit } from '../../../lib/audit/audit.js'
import type { ClientKey } from '../../../lib/throttle/client.js'
import { ErrorCodes, RateLimitedError } from '../../../lib/errors.js'
import { LEEWAY_S } from '../base/claims.js'
import { OAuthError, type OAuthErrorCode } from '../base/oauth-error.js'
import { ProofRefused, verifyProof, type Proof } from '../base/dpop-proof.js'
import { DPoPNonces } from '../base/dpop-nonce.js'
import type { ResolvedDPoP } from '../base/dpop-options.js'
import type { RegisteredClient } from '../base/clients.js'
import { FROM_DPOP, type TokenSource } from './token-reader.js'
import type { Claims } from '../base/types.js'

const JTI = 'dpop-jti:'

/** The audit reasons of DPoP refusals (`session.refused`, `token.refused`). */
export type DPoPReason = 'dpop_proof' | 'dpop_replay' | 'dpop_key' | 'dpop_required' | 'dpop_unbound' | 'dpop_nonce'

/**
 * A DPoP refusal: 400 in RFC 6749's shape at the token endpoint, 401 with a `WWW-Authenticate: DPoP` challenge at a
 * protected route; `DPoP-Nonce` with the current nonce when a nonce was missing or stale.
 */
export class DPoPError extends OAuthError {
  constructor (status: 400 | 401, error: OAuthErrorCode, description: string, private readonly answerHeaders: Readonly<Record<string, string>>, reason: DPoPReason) {
    super(status, error, description, ErrorCodes.DPOP, { reason })
    this.name = 'DPoPError'
  }

  override get headers (): Readonly<Record<string, string>> { return this.answerHeaders }
}

/** True when a session must be served with a proof: sent with the DPoP scheme, or bound to a key (`cnf.jkt`). */
export function needsProof (source: TokenSource, claims: Claims): boolean {
  return source === FROM_DPOP || claims.cnf !== undefined
}

export interface DPoPDeps {
  options: ResolvedDPoP
  store: StateStore
  /** The public base address (`url`, no trailing slash): `htu` is this plus the request's path. */
  url: string
  clientKey: ClientKey
  audit: Audit
}

type Where = 'token' | 'resource'

export class DPoP {
  readonly nonces: DPoPNonces
  /** The token each request proved already: a second read of its session in the same request spends no second `jti`. */
  private readonly proven = new WeakMap<FastifyRequest, string>()
  private readonly aths = new WeakMap<Claims, { token: string; ath: string }>()
  private readonly o: ResolvedDPoP

  constructor (private readonly d: DPoPDeps) {
    this.o = d.options
    this.nonces = new DPoPNonces(d.store)
  }

  /** The algorithms a proof may use (RFC 8414 `dpop_signing_alg_values_supported`). */
  get algorithms (): string[] { return [...this.o.algorithms] }

  /**
   * The key a token request binds its tokens to: the thumbprint of its proof's key, or undefined when it carries
   * none (or the client does not use DPoP). Refused (DPoPError 400, audited as `token.refused`) when the proof
   * does not hold, or when the client requires one and it has none. With `reply` (the token endpoint's), a nonce
   * is asked for when `dpop.nonce` says so, and told in `DPoP-Nonce`; without (`tokens.issuePair` in the app's own
   * route), none is.
   */
  async tokenRequest (request: FastifyRequest, client: RegisteredClient, reply?: FastifyReply): Promise<string | undefined> {
    if (client.dpop === 'off') return undefined
    try {
      if (headerCount(request) === 0) {
        if (client.dpop === 'required') throw this.refusal('token', 'invalid_dpop_proof', `${client.id} must send a DPoP proof (RFC 9449): it gets DPoP-bound tokens only`, 'dpop_required')
        return undefined
      }
      // Every answer to a proof tells the current nonce, so that the client's next proof has it.
      const nonce = reply !== undefined && this.o.nonceAtToken
      if (nonce) reply.header('dpop-nonce', await this.nonces.now())
      return (await this.check(request, 'token', undefined, nonce)).jkt
    } catch (err) {
      if (err instanceof DPoPError && err.reason !== 'dpop_nonce' && this.d.audit.on) {
        this.d.audit.emit(request, 'token.refused', { reason: err.reason!, clientId: client.id })
      }
      throw err
    }
  }

  /**
   * A protected route's request with a session that needs a proof (`needsProof`): its proof must be of the key the
   * token is bound to, for this request and this token. Rejects DPoPError 401 (the caller audits it).
   */
  async resource (request: FastifyRequest, reply: FastifyReply | undefined, token: string, source: TokenSource, claims: Claims): Promise<void> {
    if (this.proven.get(request) === token) return
    const jkt = claims.cnf?.jkt
    if (jkt === undefined) throw this.refusal('resource', 'invalid_token', 'this token is not bound to a DPoP key: send it as a Bearer token', 'dpop_unbound')
    if (source !== FROM_DPOP) throw this.refusal('resource', 'invalid_token', 'this token is bound to a DPoP key: send it as Authorization: DPoP, with a proof signed by that key', 'dpop_required')
    if (this.o.nonceAtResource) reply?.header('dpop-nonce', await this.nonces.now())
    await this.check(request, 'resource', this.athOf(token, claims), this.o.nonceAtResource, jkt, claims.jti)
    this.proven.set(request, token)
  }

  /**
   * The proof of a request, checked in RFC 9449 §4.3's order; `ath` is the hash of the token it must come with,
   * `jkt` the key it must be signed with. The `jti` is spent last, so a refused proof spends nothing.
   */
  private async check (request: FastifyRequest, where: Where, ath: string | undefined, nonce: boolean, jkt?: string, session?: string): Promise<Proof> {
    const count = headerCount(request)
    if (count === 0) throw this.refusal(where, 'invalid_dpop_proof', 'a DPoP proof (the DPoP header) is required', 'dpop_required')
    const value = request.headers.dpop
    if (count > 1 || typeof value !== 'string' || value.includes(',')) throw this.refusal(where, 'invalid_dpop_proof', 'send exactly one DPoP header', 'dpop_proof')
    let proof: Proof
    try {
      proof = verifyProof(value, this.o.algorithms)
    } catch (err) {
      if (err instanceof ProofRefused) throw this.refusal(where, 'invalid_dpop_proof', err.details, 'dpop_proof')
      throw err
    }
    if (jkt !== undefined && proof.jkt !== jkt) throw this.refusal(where, 'invalid_token', 'the DPoP proof is signed by another key than the one this token is bound to', 'dpop_key')
    if (nonce && !await this.nonces.valid(proof.nonce)) {
      throw this.refusal(where, 'use_dpop_nonce', 'the DPoP proof needs the server nonce of the DPoP-Nonce header', 'dpop_nonce', await this.nonces.now())
    }
    const now = Date.now() / 1000
    if (proof.iat < now - this.o.proofMaxAgeS - LEEWAY_S) throw this.refusal(where, 'invalid_dpop_proof', `the DPoP proof is older than ${this.o.proofMaxAgeS} s (iat)`, 'dpop_proof')
    if (proof.iat > now + LEEWAY_S) throw this.refusal(where, 'invalid_dpop_proof', 'the DPoP proof is issued in the future (iat)', 'dpop_proof')
    if (proof.htm !== request.method) throw this.refusal(where, 'invalid_dpop_proof', 'the DPoP proof is for another method (htm)', 'dpop_proof')
    if (!this.sameUrl(proof.htu, request)) throw this.refusal(where, 'invalid_dpop_proof', 'the DPoP proof is for another URL (htu)', 'dpop_proof')
    if (ath !== undefined && proof.ath !== ath) throw this.refusal(where, 'invalid_dpop_proof', proof.ath === undefined ? 'the DPoP proof needs the access token\'s hash (ath)' : 'the DPoP proof is for another access token (ath)', 'dpop_proof')
    // Remembered as long as the proof could be accepted, and counted as the state store counts what clients make
    // (at most `maxPerClient` live entries each, and a full store evicts from the one holding the most): per address
    // at the token endpoint, where the client is not signed in yet, per session at a route, so that no session can
    // fill the store for the others (nor a busy office behind one address be counted as one).
    const ttlMs = (this.o.proofMaxAgeS + 2 * LEEWAY_S) * 1000
    const key = JTI + createHash('sha256').update(`${proof.jkt}\n${proof.jti}`).digest('base64url')
    const client = where === 'token' ? this.d.clientKey(request) : `dpop:${session!}`
    let fresh: boolean
    try {
      fresh = await this.d.store.setIfAbsent(key, '1', ttlMs, { client })
    } catch (err) {
      if (err instanceof RateLimitedError) throw new RateLimitedError(`too many DPoP proofs ${where === 'token' ? 'from this address' : 'of this session'} within ${this.o.proofMaxAgeS + 2 * LEEWAY_S} s`, err.retryAfterSec * 1000)
      throw err
    }
    if (!fresh) throw this.refusal(where, 'invalid_dpop_proof', 'the DPoP proof was used already (jti)', 'dpop_replay')
    return proof
  }

  /** The token's `ath`, hashed once per verified session (its claims object is the cached session's, one per token). */
  private athOf (token: string, claims: Claims): string {
    const known = this.aths.get(claims)
    if (known?.token === token) return known.ath
    const ath = athOf(token)
    this.aths.set(claims, { token, ath })
    return ath
  }

  /** `htu` is this request's URL on the public `url` (RFC 9449 §4.3: without query and fragment, normalised). */
  private sameUrl (htu: string, request: FastifyRequest): boolean {
    const url = request.originalUrl
    const end = url.search(/[?#]/)
    const exact = `${this.d.url}${end === -1 ? url : url.slice(0, end)}`
    // What clients send (openid-client: origin and path of the URL it requested), compared without parsing.
    if (htu === exact) return true
    try {
      const expected = new URL(exact)
      const given = new URL(htu)
      return given.username === '' && given.password === '' && given.origin === expected.origin && given.pathname === expected.pathname
    } catch {
      return false
    }
  }

  /** The refusal of `where`: 400 at the token endpoint, 401 with a DPoP challenge at a route. */
  private refusal (where: Where, error: OAuthErrorCode, description: string, reason: DPoPReason, nonce?: string): DPoPError {
    const headers: Record<string, string> = nonce === undefined ? {} : { 'dpop-nonce': nonce }
    if (where === 'token') return new DPoPError(400, error, description, headers, reason)
    headers['www-authenticate'] = `DPoP error="${error}", error_description="${quoted(description)}", algs="${this.o.algs}"`
    return new DPoPError(401, error, description, headers, reason)
  }
}

/** How many `DPoP` header lines the request has (Node joins repeated ones into one value with commas). */
function headerCount (request: FastifyRequest): number {
  if (request.headers.dpop === undefined) return 0
  const raw = request.raw.rawHeaders
  let count = 0
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'dpop') count++
  return Math.max(count, 1)
}

/** `ath`: base64url SHA-256 of the access token (RFC 9449 §4.2). */
export function athOf (token: string): string {
  return createHash('sha256').update(token).digest('base64url')
}

/** A quoted-string's content: printable ASCII, quotes and backslashes escaped. */
function quoted (text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').replace(/[\\"]/g, '\\$&')
}
