/**
 * The meeting point of a provider that checks a first factor (the direct provider's password) and a plugin that
 * adds a second one (passkeys), so that neither imports the other and the auth core knows of neither.
 *
 * A first-factor provider declares that it takes a second factor (`take`) and, once a password is right, asks for
 * the one required of its logins (`of`). A second-factor plugin requires itself for named providers (`requireOf`)
 * and checks at ready that each of them takes one (`takes`), so
 * a misspelt or unsuitable provider name fails the start instead of leaving logins with one factor.
 * Registrations are kept per app, in the auth core's `SecondFactorRegistry`, reached through the provider kit.
 *
 * A provider may require several second factors (passkeys and an authenticator app): each one the user holds sets
 * its own pending login, and the one answer (401 `GATEHOUSE_SECOND_FACTOR`) names them all, so the user uses either.
 */
import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, OptionsError } from '../errors.js'
import type { UserData } from '../user.js'

/** A login whose first factor was checked, as the provider would complete it. */
export interface FirstFactorLogin {
  user: UserData
  aud?: string | undefined
  from?: string | undefined
  sessionOnly?: boolean | undefined
  /**
   * The id of this password login, the same for every second factor it waits for: each factor's pending login
   * carries it and is spent under `spentLoginKey(attempt)`, so one password login completes once whichever factor
   * (and however many) the user presents.
   */
  attempt?: string | undefined
  /**
   * The provider whose first factor passed (`local`), set by the second-factor step: each pending login carries it,
   * so that the login its second factor completes names the method the user chose (the last-login-method cookie).
   */
  provider?: string | undefined
}

/** A password login waiting for a second factor, as its pending-login cookie carries it (passkeys, TOTP). */
export interface PendingLogin {
  /** The id it is spent under, once (the password login's `attempt`, shared by its second factors). */
  jti: string
  /** When the pending login ends (seconds). */
  exp: number
  user: UserData
  aud?: string | undefined
  from?: string | undefined
  sess: boolean
  /** The first factor's provider (`local`): the sign-in method the completed login names. */
  first?: string | undefined
}

/** The state-store key a completed pending login (`attempt`, or the pending token's id) is remembered under. */
export function spentLoginKey (id: string): string {
  return `second-factor:pending:${id}`
}

/** What a second factor the user holds asks for: its name (`passkey`, `totp`) and where to go on. */
export interface SecondFactorStep { method: string; details: string }

/**
 * Called after the first factor passed. Resolves undefined when the user does not hold this factor, or the step it
 * asks for, having set its pending login on `reply` (the answer itself is sent once for every factor).
 */
export type SecondFactor = (request: FastifyRequest, reply: FastifyReply, login: FirstFactorLogin) => Promise<SecondFactorStep | undefined>

/**
 * The outcome of the second-factor step after a right first factor: `complete` when the user holds none of the
 * factors required (the login completes now), or `answered` when the 401 naming the factors was sent (no session yet).
 */
export type SecondFactorOutcome = 'complete' | 'answered'

/** The second factors required of one provider's logins, as one step run after its first factor. */
export type SecondFactors = (request: FastifyRequest, reply: FastifyReply, login: FirstFactorLogin) => Promise<SecondFactorOutcome>

/**
 * One app's second factors: which providers take one and which factors each requires. Owned by the auth core (one
 * per app) and handed to providers through the provider kit, so that registrations never cross apps.
 */
export class SecondFactorRegistry {
  readonly #takers = new Set<string>()
  readonly #factors = new Map<string, Array<{ method: string; factor: SecondFactor }>>()
  /**
   * Whether the request's browser is trusted to skip the second factor of a user ("trust this device", set by the
   * auth core when its `trustedDevices` option is on).
   */
  trustedBrowser: ((request: FastifyRequest, userId: string) => Promise<boolean>) | undefined

  /** Declares that provider `name` asks `of(name)` after its first factor. */
  take (name: string): void {
    this.#takers.add(name)
  }

  /** Whether provider `name` declared that it takes a second factor. */
  takes (name: string): boolean {
    return this.#takers.has(name)
  }

  /**
   * Requires `factor` (of kind `method`: `passkey`, `totp`) after the first factor of provider `name`, besides the
   * factors of other kinds required already; one factor of each kind per provider.
   */
  require (name: string, method: string, factor: SecondFactor, option: string): void {
    const list = this.#factors.get(name) ?? []
    if (list.some((f) => f.method === method)) throw new OptionsError(option, `names "${name}", which already has a second factor of this kind (${method})`)
    this.#factors.set(name, [...list, { method, factor }])
  }

  /**
   * Requires `factor` of each provider named in `providers` (a second-factor plugin's `secondFactor` option), and
   * checks when `fastify` is ready that each of them is mounted and takes one: a typo must not leave logins with
   * one factor.
   */
  requireOf (fastify: FastifyInstance, providers: string[], method: string, factor: SecondFactor, option: string): void {
    for (const provider of providers) this.require(provider, method, factor, option)
    fastify.addHook('onReady', async () => {
      for (const provider of providers) {
        if (!this.takes(provider)) throw new OptionsError(option, `names "${provider}", which is not a direct provider of this app`)
      }
    })
  }

  /** The second factors required of provider `name`'s logins, as one step; undefined when none is. */
  of (name: string): SecondFactors | undefined {
    const factors = this.#factors.get(name)
    if (factors === undefined) return undefined
    return async (request, reply, firstFactor) => {
      if (this.trustedBrowser !== undefined && await this.trustedBrowser(request, firstFactor.user.id)) return 'complete'
      const login = { ...firstFactor, attempt: randomUUID(), provider: name }
      const steps: SecondFactorStep[] = []
      for (const { factor } of factors) {
        const step = await factor(request, reply, login)
        if (step !== undefined) steps.push(step)
      }
      if (steps.length === 0) return 'complete'
      // Not returned: a sent Fastify reply is a thenable, and awaiting it would resolve undefined.
      void reply.code(401).type('application/json; charset=utf-8').send({
        error: 'second factor required',
        details: steps.map((s) => s.details).join('; or '),
        code: ErrorCodes.SECOND_FACTOR,
        methods: steps.map((s) => s.method)
      })
      return 'answered'
    }
  }
}
