/**
 * The meeting point of a provider that checks a first factor (the direct provider's password) and a plugin that
 * adds a second one (passkeys), so that neither imports the other and the auth core knows of neither.
 *
 * A first-factor provider declares that it takes a second factor (`takeSecondFactor`) and, once a password is
 * right, asks for the one required of its logins (`secondFactorOf`). A second-factor plugin requires itself for
 * named providers (`requireSecondFactor`) and checks at ready that each of them takes one (`takesSecondFactor`), so
 * a misspelt or unsuitable provider name fails the start instead of leaving logins with one factor.
 * Registrations are kept per app (keyed by an object the provider kit names for it: `appOfKit(kit)`).
 *
 * A provider may require several second factors (passkeys and an authenticator app): each one the user holds sets
 * its own pending login, and the one answer (401 `GATEHOUSE_SECOND_FACTOR`) names them all, so the user uses either.
 */
import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, OptionsError } from './errors.js'
import type { UserData } from './user.js'

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
 * Answers 401 when the user holds one of the second factors, else leaves the reply alone (the login completes).
 * Tell which by `reply.sent`: the promise resolves undefined either way, a sent Fastify reply being a thenable.
 */
export type SecondFactors = (request: FastifyRequest, reply: FastifyReply, login: FirstFactorLogin) => Promise<FastifyReply | undefined>

interface Registry { takers: Set<string>; factors: Map<string, Array<{ method: string; factor: SecondFactor }>> }
const registries = new WeakMap<object, Registry>()

function registryOf (auth: object): Registry {
  let r = registries.get(auth)
  if (r === undefined) {
    r = { takers: new Set(), factors: new Map() }
    registries.set(auth, r)
  }
  return r
}

/** Declares that provider `name` asks `secondFactorOf` after its first factor. */
export function takeSecondFactor (auth: object, name: string): void {
  registryOf(auth).takers.add(name)
}

/** Whether provider `name` declared that it takes a second factor. */
export function takesSecondFactor (auth: object, name: string): boolean {
  return registryOf(auth).takers.has(name)
}

/**
 * Requires `factor` (of kind `method`: `passkey`, `totp`) after the first factor of provider `name`, besides the
 * factors of other kinds required already; one factor of each kind per provider.
 */
export function requireSecondFactor (auth: object, name: string, method: string, factor: SecondFactor, option: string): void {
  const list = registryOf(auth).factors.get(name) ?? []
  if (list.some((f) => f.method === method)) throw new OptionsError(option, `names "${name}", which already has a second factor of this kind (${method})`)
  registryOf(auth).factors.set(name, [...list, { method, factor }])
}

/**
 * Requires `factor` of each provider named in `providers` (a second-factor plugin's `secondFactor` option), and checks
 * when `fastify` is ready that each of them is mounted and takes one: a typo must not leave logins with one factor.
 */
export function requireSecondFactorOf (fastify: FastifyInstance, auth: object, providers: string[], method: string, factor: SecondFactor, option: string): void {
  for (const provider of providers) requireSecondFactor(auth, provider, method, factor, option)
  fastify.addHook('onReady', async () => {
    for (const provider of providers) {
      if (!takesSecondFactor(auth, provider)) throw new OptionsError(option, `names "${provider}", which is not a direct provider of this app`)
    }
  })
}

/** The second factors required of provider `name`'s logins, as one step; undefined when none is. */
export function secondFactorOf (auth: object, name: string): SecondFactors | undefined {
  const factors = registries.get(auth)?.factors.get(name)
  if (factors === undefined) return undefined
  return async (request, reply, firstFactor) => {
    const login = { ...firstFactor, attempt: randomUUID() }
    const steps: SecondFactorStep[] = []
    for (const { factor } of factors) {
      const step = await factor(request, reply, login)
      if (step !== undefined) steps.push(step)
    }
    if (steps.length === 0) return undefined
    return await reply.code(401).type('application/json; charset=utf-8').send({
      error: 'second factor required',
      details: steps.map((s) => s.details).join('; or '),
      code: ErrorCodes.SECOND_FACTOR,
      methods: steps.map((s) => s.method)
    })
  }
}
