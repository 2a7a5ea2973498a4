/**
 * The meeting point of the providers that can check a signed-in user's primary factor again (the direct provider's
 * password, a passkey's assertion) and the routes that change factors (the core's session list, the TOTP and
 * passkey providers): re-authentication in the request that makes the change (ASVS 5.0 7.5.1), without those
 * routes knowing the providers, nor the providers each other. Registrations are kept per app, in the auth core's
 * `ReauthRegistry`, reached through the provider kit, as for the second factor (second-factor.ts).
 */
import type { FastifyRequest } from 'fastify'
import type { UserData } from '../user.js'

/** The request field a check reads: `password` (a direct provider) or `passkey` (a WebAuthn assertion). */
export type ReauthKind = 'password' | 'passkey'

/** Who is re-authenticated: the session's user and the session's id (its `jti`). */
export interface ReauthSubject { readonly user: UserData; readonly sessionId: string }

/**
 * Checks `value` (the request's `password` or `passkey` field) for `subject`. Resolves false when this check does
 * not hold the user's factor (another provider's user, no passkey ceremony begun for this session), true when the
 * factor is right; throws an HttpError when it is wrong or malformed.
 */
export type ReauthCheck = (request: FastifyRequest, subject: ReauthSubject, value: unknown) => Promise<boolean>

/** One app's re-authentication checks by kind: owned by the auth core, reached through the provider kit. */
export class ReauthRegistry {
  readonly #checks = new Map<ReauthKind, ReauthCheck[]>()

  /** Adds a check of `kind` (a direct provider for its users' passwords, a passkey provider). */
  register (kind: ReauthKind, check: ReauthCheck): void {
    this.#checks.set(kind, [...this.#checks.get(kind) ?? [], check])
  }

  /** The kinds the app can re-authenticate with (for an answer that tells the page what to send). */
  kinds (): ReauthKind[] {
    return [...this.#checks.keys()]
  }

  /**
   * Runs the checks of `kind` in registration order until one holds the user's factor: true when it was right
   * (a wrong one throws), false when no check holds it.
   */
  async reauthenticate (kind: ReauthKind, request: FastifyRequest, subject: ReauthSubject, value: unknown): Promise<boolean> {
    for (const check of this.#checks.get(kind) ?? []) {
      if (await check(request, subject, value)) return true
    }
    return false
  }
}
