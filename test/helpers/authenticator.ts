/**
 * A software WebAuthn authenticator for the HTTP tests: it makes the JSON a browser sends after
 * `navigator.credentials.create()` / `.get()` (attestation format `none`, ES256 keys), and can be told to lie:
 * another origin, RP id, challenge or type, a chosen signature counter, another credential id. The browser tests use
 * Chromium's own virtual authenticator instead.
 *
 * It writes the little CBOR WebAuthn needs (unsigned and negative integers, byte and text strings, maps).
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>

function head (major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n])
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n])
  if (n < 0x10000) { const b = Buffer.alloc(3); b[0] = (major << 5) | 25; b.writeUInt16BE(n, 1); return b }
  const b = Buffer.alloc(5); b[0] = (major << 5) | 26; b.writeUInt32BE(n, 1); return b
}

export function cbor (v: Cbor): Buffer {
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v)
  if (typeof v === 'string') { const b = Buffer.from(v, 'utf8'); return Buffer.concat([head(3, b.length), b]) }
  if (v instanceof Uint8Array) return Buffer.concat([head(2, v.length), v])
  const parts: Buffer[] = [head(5, v.size)]
  for (const [k, val] of v) parts.push(cbor(k), cbor(val))
  return Buffer.concat(parts)
}

const b64 = (b: Uint8Array | string): string => Buffer.from(b).toString('base64url')
const sha256 = (b: Uint8Array | string): Buffer => createHash('sha256').update(b).digest()

/** Authenticator data flags. */
const UP = 0x01
const UV = 0x04
const AT = 0x40

export interface SoftCredential { id: string; key: KeyObject; publicCose: Buffer; userHandle: string | undefined; counter: number; rpID: string }

/** What a test may change in a response (everything else is what an honest authenticator would send). */
export interface Lies {
  origin?: string
  rpID?: string
  challenge?: string
  type?: string
  /** Signature counter to report (default: the credential's next one). */
  counter?: number
  /** User verified flag (default true). */
  uv?: boolean
  /** Another credential's id in the response (the signature stays this credential's). */
  id?: string
  /** Registers this existing credential again (same id and key) instead of making a new one. */
  reuse?: SoftCredential
}

interface CreationOptions { challenge: string; rp: { id?: string }; user: { id: string } }
interface RequestOptions { challenge: string; rpId?: string; allowCredentials?: Array<{ id: string }> }

export class SoftAuthenticator {
  readonly credentials = new Map<string, SoftCredential>()

  constructor (readonly origin: string) {}

  /** The registration response to creation options (as `startRegistration` returns it). */
  create (options: CreationOptions, lies: Lies = {}): { credential: SoftCredential; json: Record<string, unknown> } {
    const rpID = lies.rpID ?? options.rp.id!
    const credential = lies.reuse ?? newCredential(options.user.id, rpID)
    const idBytes = Buffer.from(credential.id, 'base64url')
    const publicCose = credential.publicCose
    const len = Buffer.alloc(2)
    len.writeUInt16BE(idBytes.length)
    const authData = Buffer.concat([sha256(rpID), Buffer.from([UP | (lies.uv === false ? 0 : UV) | AT]), counterBytes(lies.counter ?? 0), Buffer.alloc(16), len, idBytes, publicCose])
    const attestationObject = cbor(new Map<Cbor, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]))
    const clientData = this.clientData('webauthn.create', options.challenge, lies)
    this.credentials.set(credential.id, credential)
    return {
      credential,
      json: {
        id: lies.id ?? credential.id,
        rawId: lies.id ?? credential.id,
        type: 'public-key',
        response: { clientDataJSON: b64(clientData), attestationObject: b64(attestationObject), transports: ['internal'] },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform'
      }
    }
  }

  /** The authentication response to request options with `credential` (as `startAuthentication` returns it). */
  get (options: RequestOptions, credential: SoftCredential, lies: Lies = {}): Record<string, unknown> {
    const counter = lies.counter ?? credential.counter + 1
    if (lies.counter === undefined) credential.counter = counter
    const authData = Buffer.concat([sha256(lies.rpID ?? credential.rpID), Buffer.from([UP | (lies.uv === false ? 0 : UV)]), counterBytes(counter)])
    const clientData = this.clientData('webauthn.get', options.challenge, lies)
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), credential.key)
    const response: Record<string, unknown> = { clientDataJSON: b64(clientData), authenticatorData: b64(authData), signature: b64(signature) }
    if (credential.userHandle !== undefined) response.userHandle = credential.userHandle
    return { id: lies.id ?? credential.id, rawId: lies.id ?? credential.id, type: 'public-key', response, clientExtensionResults: {}, authenticatorAttachment: 'platform' }
  }

  private clientData (type: string, challenge: string, lies: Lies): Buffer {
    return Buffer.from(JSON.stringify({ type: lies.type ?? type, challenge: lies.challenge ?? challenge, origin: lies.origin ?? this.origin, crossOrigin: false }))
  }
}

function newCredential (userHandle: string, rpID: string): SoftCredential {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const jwk = publicKey.export({ format: 'jwk' }) as { x: string; y: string }
  const publicCose = cbor(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x, 'base64url')], [-3, Buffer.from(jwk.y, 'base64url')]]))
  return { id: b64(randomBytes(16)), key: privateKey, publicCose, userHandle, counter: 0, rpID }
}

function counterBytes (n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n)
  return b
}
