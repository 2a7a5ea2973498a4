/**
 * Every Fastify declaration merging of the package, in one place. It is loaded by the package's entry points
 * (`fastify-gatehouse`, `fastify-gatehouse/toolkit`), so the decorations type-check wherever they are used.
 */
import type { GatehouseAuth } from './plugins/core/types.js'
import type { ProviderMethods } from './plugins/provider-methods.js'
import type { User } from './lib/user.js'
import type { Benchmarks } from './plugins/toolkit/benchmarks.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The app's API of the auth core: hooks, user getters, logout and revocation, JWKS, the provider list, session
     * tokens, and the `add*Provider` methods (`authPlugin` is the one way to the core, so they are always there).
     */
    auth: GatehouseAuth & ProviderMethods
    /** Response-time collector of the toolkit's benchmarks plugin. */
    benchmarks: Benchmarks
  }
  interface FastifyRequest {
    /**
     * The signed-in user, set by the auth hooks (`authenticate`, `admin`, `rbac`, `trace`, `updateUser`): the user
     * or `null`. Not set on a route where none of them ran; `fastify.auth.getUser(request)` answers `null` there.
     */
    user: User | null
    /** `X-Request-ID` of this request, set by the toolkit's trace plugin or hook (`''` before). */
    requestId: string
    /** Client address found by the toolkit's realIp plugin (`''` until it ran). Read it with `realIp(request)`. */
    realIp: string
    /** True once a basic-auth hook of the toolkit accepted the request's credentials. */
    basicAuthorized?: boolean
  }
}

export {}
