/** What the passkey routes share: options, the WebAuthn library, the stores and the small helpers they all use. */
import { createHash } from 'node:crypto'
import type { Audit } from '../../lib/audit/audit.js'
import type { StateStore } from '../../lib/state-store.js'
import type { GatehouseAuth, ProviderKit } from '../../plugins/core/kit.js'
import type { PasskeyCredential, PasskeyStore } from '../../stores/passkey/index.js'
import type { Ceremonies } from './ceremony.js'
import type { ResolvedPasskeyOptions } from './options.js'
import type { PendingLogins } from './pending.js'

export type WebAuthn = typeof import('@simplewebauthn/server')

export interface PasskeyContext {
  /** The app's API (`fastify.auth`): the hooks and user getters of the management routes. */
  auth: GatehouseAuth
  /** What the provider gets from the auth core. */
  kit: ProviderKit
  audit: Audit
  /** Where challenges and pending logins are kept (`stateStore`). */
  state: StateStore
  o: ResolvedPasskeyOptions
  /** @simplewebauthn/server, loaded when the plugin is registered. */
  webauthn: WebAuthn
  passkeys: PasskeyStore
  ceremonies: Ceremonies
  pending: PendingLogins
  log(level: 'INFO' | 'WARN', format: string, ...args: unknown[]): void
}

/** What every answer is verified against: the ceremony's challenge, the allowed origins and the RP id. */
export function expectations (o: ResolvedPasskeyOptions, challenge: string): { expectedChallenge: string; expectedOrigin: string[]; expectedRPID: string } {
  return { expectedChallenge: challenge, expectedOrigin: o.origins, expectedRPID: o.rpID }
}

/**
 * The WebAuthn user handle of a user: 32 opaque bytes derived from the user id (which is already a hash of the
 * provider's id), the same every time, so an authenticator keeps one passkey per user and site.
 */
export function userHandleOf (userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha256').update('gatehouse-passkey-user\0').update(userId).digest())
}

/** What a user sees of their passkeys: never the public key or another user's data. */
export interface PasskeyInfo {
  id: string
  label?: string | undefined
  created: string
  lastUsed?: string | undefined
  transports: string[]
  deviceType: PasskeyCredential['deviceType']
  backedUp: boolean
}

export function passkeyInfo (c: PasskeyCredential): PasskeyInfo {
  const info: PasskeyInfo = { id: c.id, created: new Date(c.created).toISOString(), transports: c.transports, deviceType: c.deviceType, backedUp: c.backedUp }
  if (c.label !== undefined) info.label = c.label
  if (c.lastUsed !== undefined) info.lastUsed = new Date(c.lastUsed).toISOString()
  return info
}

/** The first line of a failure's message, for logs (library messages may echo expected values, never secrets here). */
export function reasonOf (err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300)
}
