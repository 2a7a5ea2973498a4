/**
 * DPoP server nonces (RFC 9449 §8–9): a value the server hands out in the `DPoP-Nonce` header and a proof must
 * carry, so that a proof cannot be made ahead of time (a key stolen for a moment signs nothing for later, whatever
 * `iat` it claims). Each instance makes one nonce every few minutes and keeps it in the state store,
 * so that every instance sharing the store takes the nonces of the others; a nonce lives 10 minutes. Only the
 * server makes entries, one per instance per rotation: nothing a client sends adds any.
 *
 * The cost to a client is one round trip when it has no nonce or a stale one: the refusal (`use_dpop_nonce`)
 * carries the current nonce, and standard clients (openid-client) retry once with it; every later answer carries
 * the current nonce too, so a client in use never holds a stale one.
 */
import { randomBytes } from 'node:crypto'
import type { StateStore } from '../../../lib/state-store.js'

const KEY = 'dpop-nonce:'
/** How long a nonce is taken. */
export const NONCE_TTL_MS = 10 * 60_000
/** How often an instance makes a new one (a client holding the previous one has the other half of its life). */
const ROTATE_MS = NONCE_TTL_MS / 2
/** 24 random bytes in base64url: what this module makes, and all it looks up. */
const SHAPE = /^[A-Za-z0-9_-]{32}$/

export class DPoPNonces {
  /** Nonces known good here (made here, or found in the store), by the time they stop being taken. */
  private readonly known = new Map<string, number>()
  private current: { nonce: string; until: number } | undefined
  private making: Promise<string> | undefined

  constructor (private readonly store: StateStore) {}

  /** The nonce to hand out now: made (and stored for every instance) when the last one is due for rotation. */
  async now (): Promise<string> {
    const at = Date.now()
    if (this.current !== undefined && this.current.until > at) return this.current.nonce
    this.making ??= this.make(at).finally(() => { this.making = undefined })
    return await this.making
  }

  /** True when `nonce` is one of the live nonces of any instance. */
  async valid (nonce: string | undefined): Promise<boolean> {
    if (nonce === undefined || !SHAPE.test(nonce)) return false
    const at = Date.now()
    const until = this.known.get(nonce)
    if (until !== undefined) return until > at
    const stored = Number(await this.store.get(KEY + nonce))
    if (!(stored > at)) return false
    // Another instance's: known here from now on, until its end (its value).
    this.forgetExpired(at)
    this.known.set(nonce, Math.min(stored, at + NONCE_TTL_MS))
    return true
  }

  private async make (at: number): Promise<string> {
    const nonce = randomBytes(24).toString('base64url')
    await this.store.set(KEY + nonce, String(at + NONCE_TTL_MS), NONCE_TTL_MS)
    this.forgetExpired(at)
    this.known.set(nonce, at + NONCE_TTL_MS)
    this.current = { nonce, until: at + ROTATE_MS }
    return nonce
  }

  /** Drops expired nonces: the map holds a handful (this instance's and those of the others it met). */
  private forgetExpired (at: number): void {
    for (const [nonce, until] of this.known) if (until <= at) this.known.delete(nonce)
  }
}
