/**
 * The meeting point of a provider that checks a first factor (the direct provider's password) and a plugin that
 * adds a second one (passkeys), so that neither imports the other and the auth core knows of neither.
 *
 * A first-factor provider declares that it takes a second factor (`takeSecondFactor`) and, once a password is
 * right, asks for the one required of its logins (`secondFactorOf`). A second-factor plugin requires itself for
 * named providers (`requireSecondFactor`) and checks at ready that each of them takes one (`takesSecondFactor`), so
 * a misspelt or unsuitable provider name fails the start instead of leaving logins with one factor.
 * Registrations are kept per app (keyed by an object the provider kit names for it: `appOfKit(kit)`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { OptionsError } from './errors.js'
import type { UserData } from './user.js'

/** A login whose first factor was checked, as the provider would complete it. */
export interface FirstFactorLogin {
  user: UserData
  aud?: string | undefined
  from?: string | undefined
  sessionOnly?: boolean | undefined
}

/**
 * Called after the first factor passed. Resolves undefined when the user has no second factor (the provider
 * completes the login as usual), or the reply it answered with (a pending login: no session).
 */
export type SecondFactor = (request: FastifyRequest, reply: FastifyReply, login: FirstFactorLogin) => Promise<FastifyReply | undefined>

interface Registry { takers: Set<string>; factors: Map<string, SecondFactor> }
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

/** Requires `factor` after the first factor of provider `name`; one second factor per provider. */
export function requireSecondFactor (auth: object, name: string, factor: SecondFactor, option: string): void {
  const r = registryOf(auth)
  if (r.factors.has(name)) throw new OptionsError(option, `names "${name}", which already has a second factor`)
  r.factors.set(name, factor)
}

/** The second factor required of provider `name`'s logins, if any. */
export function secondFactorOf (auth: object, name: string): SecondFactor | undefined {
  return registries.get(auth)?.factors.get(name)
}
