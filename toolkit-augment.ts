/**
 * The HTTP toolkit's Fastify declaration merging, loaded by `fastify-gatehouse/toolkit` (and nothing of the auth
 * core's: see augment.ts).
 */
import type { Benchmarks } from './plugins/toolkit/benchmarks.js'
import type { ReadonlyUser } from './lib/user.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Response-time collector of the toolkit's benchmarks plugin. */
    benchmarks: Benchmarks
  }
  interface FastifyRequest {
    /** `X-Request-ID` of this request, set by the toolkit's trace plugin or hook (`''` before). */
    requestId: string
    /** Client address found by the toolkit's realIp plugin (`''` until it ran). Read it with `realIp(request)`. */
    realIp: string
    /** True once a basic-auth hook of the toolkit accepted the request's credentials. */
    basicAuthorized?: boolean | undefined
    /**
     * The user a basic-auth checker of the toolkit returned (`{ ok: true, user }`), or the auth hooks' user when the
     * auth plugins are used too (declared alike in augment.ts).
     */
    user: ReadonlyUser | null
  }
}

export {}
