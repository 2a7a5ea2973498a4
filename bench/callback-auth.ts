/**
 * A bench-only shape of `authenticate` for the hook ladder: a callback-style hook `(request, reply, done)` that
 * calls `done()` synchronously when the session comes from the verified-session cache (the resolver answers
 * without a promise), so that Fastify runs the next step in the same turn. Anything else (a first-seen or
 * refreshed token, no session, a refusal) goes to the product's `authenticate`, whose promise is adapted to
 * `done`. It measures what the callback shape would save; it is not the product's hook (the product change is
 * another step's), and it reaches the core's internals, which only the bench may.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { coreOf } from '../plugins/core/signin/internals.js'
import { createUserResolver } from '../plugins/core/signin/user-resolver.js'

export function callbackAuthenticate (app: FastifyInstance): onRequestHookHandler {
  const core = coreOf(app)
  // A second resolver over the core's own token service: the same cache, checks and throttle.
  const resolve = createUserResolver(core.options, core.tokens, core.throttle)
  const authenticate = app.auth.authenticate
  const viaProduct = (self: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    authenticate.call(self, request, reply).then(() => { if (!reply.sent) done() }, done)
  }
  return function callbackAuthenticate (this: FastifyInstance, request, reply, done) {
    let user: ReturnType<typeof resolve>
    try {
      user = resolve(request, reply)
    } catch {
      viaProduct(this, request, reply, done)
      return
    }
    if (user !== null && !(user instanceof Promise)) {
      request.user = user
      done()
      return
    }
    // The product hook resolves again: by then a first-seen token is cached, so it costs one cache hit more.
    if (user instanceof Promise) user.catch(() => {})
    viaProduct(this, request, reply, done)
  }
}
