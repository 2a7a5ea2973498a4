/**
 * PKCE (RFC 7636): the S256 code challenge of a code verifier, written once for both ends of the handshake: the
 * OAuth2 client engine (providers/oauth2) sends it, the local authorization server (servers/) checks it.
 */
import { createHash } from 'node:crypto'

/** `BASE64URL(SHA256(ASCII(verifier)))` (RFC 7636 §4.2, method `S256`); a verifier is ASCII (§4.1), so its UTF-8 is its ASCII. */
export function pkceChallenge (verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}
