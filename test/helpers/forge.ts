/**
 * Test helper: tokens made by hand (what an attacker or a buggy peer could send), with full control over the
 * header and the claims.
 */
import { createHmac } from 'node:crypto'

const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')

/** Claims of a valid session of `name` issued now, with `overrides` applied (`undefined` removes a claim). */
export function sessionClaims (overrides: Record<string, unknown> = {}, now = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  const claims: Record<string, unknown> = {
    aud: [''],
    iss: 'fastify-gatehouse',
    iat: now,
    nbf: now,
    exp: now + 600,
    jti: 'forged-jti-0123456789ab',
    auth_time: now,
    purpose: 'session',
    user: { name: 'mallory', id: 'local_mallory' }
  }
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete claims[k]
    else claims[k] = v
  }
  return claims
}

/** An HS256 token over `payload` with `key`; `header` replaces the default `{alg: 'HS256', typ: 'JWT', kid}`. */
export function hs256 (payload: unknown, key: string | Buffer, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT', kid: 'default' }): string {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`
}

/** The other spellings of a token's last base64url character that decode to the same bytes (set padding bits). */
export function sameBytesVariants (token: string): string[] {
  const sig = token.slice(token.lastIndexOf('.') + 1)
  const bytes = Buffer.from(sig, 'base64url')
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const out: string[] = []
  for (const ch of alphabet) {
    const variant = sig.slice(0, -1) + ch
    if (variant !== sig && Buffer.from(variant, 'base64url').equals(bytes)) out.push(token.slice(0, token.length - sig.length) + variant)
  }
  return out
}
