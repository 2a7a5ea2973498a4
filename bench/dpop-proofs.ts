/**
 * DPoP proofs for the benchmarks (bench/dpop.ts): a new one for every request, as a client sends them (RFC 9449:
 * each `jti` is taken once), signed synchronously with node:crypto so that autocannon can add one to each request
 * it builds (bench/dpop-load.ts). Every proof of one key has the same length (a 22-character `jti`, a 10-digit
 * `iat`, a 64-byte ES256 signature), so the requests of a run carry the same bytes.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type JsonWebKey } from 'node:crypto'

/** What a bench request signs its proofs with: the key (PKCS8 PEM), its public JWK, the URL and the token. */
export interface DPoPLoad { key: string; jwk: { crv: string; kty: string; x: string; y: string }; htu: string; token: string }

/** A fresh ES256 key for a bench client, and its RFC 7638 thumbprint. */
export function benchKey (): { key: string; jwk: DPoPLoad['jwk']; jkt: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const { crv, kty, x, y } = publicKey.export({ format: 'jwk' }) as Required<Pick<JsonWebKey, 'crv' | 'kty' | 'x' | 'y'>>
  const jwk = { crv, kty, x, y }
  return { key: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), jwk, jkt: createHash('sha256').update(JSON.stringify(jwk)).digest('base64url') }
}

const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

/** A signer of proofs for `d`'s key, URL and token (`htm` the method; `ath` when a token is given). */
export function proofSigner (d: Omit<DPoPLoad, 'token'> & { token?: string | undefined }, htm = 'GET'): () => string {
  const header = part({ typ: 'dpop+jwt', alg: 'ES256', jwk: d.jwk })
  const ath = d.token === undefined ? undefined : createHash('sha256').update(d.token).digest('base64url')
  return () => {
    const payload = part({ jti: randomBytes(16).toString('base64url'), htm, htu: d.htu, iat: Math.floor(Date.now() / 1000), ...(ath === undefined ? {} : { ath }) })
    const input = `${header}.${payload}`
    return `${input}.${sign('sha256', Buffer.from(input), { key: d.key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`
  }
}
