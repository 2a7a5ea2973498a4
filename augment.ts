/**
 * The auth core's Fastify declaration merging: `fastify.auth` and `request.user`. Loaded by the entries that bring
 * the auth plugins (`fastify-gatehouse`, `fastify-gatehouse/testing`), not by
 * `fastify-gatehouse/toolkit`: an app using the toolkit alone has no `fastify.auth` (the toolkit's decorations
 * are in toolkit-augment.ts).
 */
import type { GatehouseAuth, ReadonlyUser } from './plugins/core/base/types.js'
import type { ProviderMethods } from './provider-entries.js'

// The seed's registration methods (go-pkgz/auth v2's `add*Provider`), which the root plugin adds to `fastify.auth`.
declare module './plugins/core/base/types.js' {
  interface GatehouseAuth extends ProviderMethods {}
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The app's API of the auth core: hooks, user getters, logout and revocation, JWKS, the provider list, session
     * tokens, and the `add*Provider` methods (`authPlugin` is the one way to the core, so they are always there).
     * Typed under its default name; with `decoratorName`, declare the new name the same way (see
     * docs/reference/fastify-auth.md).
     */
    auth: GatehouseAuth
  }
  interface FastifyRequest {
    /**
     * The signed-in user, set by the auth hooks (`authenticate`, `admin`, `rbac`, `trace`, `updateUser`): the user
     * or `null`. Not set on a route where none of them ran; `fastify.auth.getUser(request)` answers `null` there.
     * Read-only: it is frozen and shared by the requests of a session (copy it with `new User(user)` to change it).
     * On a route behind `authenticate`, `fastify.auth.mustGetUser(request)` gives it without the `null`.
     */
    user: ReadonlyUser | null
  }
}

export {}
