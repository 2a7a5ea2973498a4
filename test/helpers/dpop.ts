/**
 * Test helper: DPoP proofs (RFC 9449) made by hand with jose, right or wrong on purpose, for the bad-input tests,
 * where a standard client (openid-client) would never send them. A key is a jose key pair with its public JWK.
 */
import { createHash, randomBytes } from 'node:crypto'
import { exportJWK, generateKeyPair, SignJWT, type JWK, type CryptoKey } from 'jose'

export interface ProofKey { alg: string; privateKey: CryptoKey; publicJwk: JWK; privateJwk: JWK }

export async function proofKey (alg = 'ES256'): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { alg, privateKey, publicJwk: await exportJWK(publicKey), privateJwk: await exportJWK(privateKey) }
}

/** The RFC 7638 thumbprint of a public JWK (EC, OKP or RSA). */
export function jktOf (jwk: JWK): string {
  const required = jwk.kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : jwk.kty === 'OKP' ? ['crv', 'kty', 'x'] : ['e', 'kty', 'n']
  const members = Object.fromEntries(required.map((m) => [m, (jwk as Record<string, unknown>)[m]]))
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url')
}

export const athOf = (token: string): string => createHash('sha256').update(token).digest('base64url')

export interface ProofFields {
  htm: string
  htu: string
  /** The access token it goes with: its hash becomes `ath`. */
  token?: string | undefined
  nonce?: string | undefined
  /** Seconds; now by default. */
  iat?: number | undefined
  jti?: string | undefined
  /** Claims set as they are (over the ones above), `undefined` ones removed. */
  payload?: Record<string, unknown> | undefined
  /** Header members set as they are (over typ, alg and jwk). */
  header?: Record<string, unknown> | undefined
}

/** A proof signed with `key`. */
export async function proof (key: ProofKey, f: ProofFields): Promise<string> {
  const payload: Record<string, unknown> = {
    jti: f.jti ?? randomBytes(16).toString('base64url'),
    htm: f.htm,
    htu: f.htu,
    iat: f.iat ?? Math.floor(Date.now() / 1000),
    ...(f.token === undefined ? {} : { ath: athOf(f.token) }),
    ...(f.nonce === undefined ? {} : { nonce: f.nonce }),
    ...f.payload
  }
  for (const k of Object.keys(payload)) if (payload[k] === undefined) delete payload[k]
  return await new SignJWT(payload)
    .setProtectedHeader({ typ: 'dpop+jwt', alg: key.alg, jwk: key.publicJwk, ...f.header } as Parameters<SignJWT['setProtectedHeader']>[0])
    .sign(key.privateKey)
}

/** A compact JWS of `header` and `payload` with the given signature bytes (or none): for `alg: none` and the like. */
export function unsigned (header: Record<string, unknown>, payload: Record<string, unknown>, signature = ''): string {
  const part = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url')
  return `${part(header)}.${part(payload)}.${signature}`
}
