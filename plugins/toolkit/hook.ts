import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { OptionsError } from '../../lib/errors.js'

/**
 * A request hook the toolkit can compose (`maybe`, `wrap`): Fastify's async form `(request, reply) => Promise`
 * or its callback form `(request, reply, done)`. Every hook the toolkit exports is of the async form, so it
 * fits `onRequest`/`preHandler` route options as well.
 */
export type RequestHook =
  | ((this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => unknown)
  | ((this: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void)

/** The shape of every hook the toolkit returns. */
export type ToolkitHook = (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => Promise<void>

/** A test on the request; may be async. */
export type RequestPredicate = (request: FastifyRequest) => boolean | Promise<boolean>

/**
 * Runs one hook of either form and resolves when it is done. Callback hooks are told apart by their arity,
 * the same rule Fastify itself applies to hooks.
 */
export function runHook (self: FastifyInstance, hook: RequestHook, request: FastifyRequest, reply: FastifyReply): unknown {
  if (hook.length >= 3) {
    return new Promise<void>((resolve, reject) => {
      // A callback hook that answers does not call done (Fastify's rule): the end of its answer settles the
      // promise then, or the caller (maybe, wrap) would hold this request forever. A connection closed
      // without an answer (the client went away mid-check) settles nothing: the hook has not decided yet,
      // and going on before it does would run the handler unchecked.
      const answered = (): void => { if (reply.raw.writableEnded) resolve() }
      reply.raw.once('close', answered)
      ;(hook as (this: FastifyInstance, rq: FastifyRequest, rp: FastifyReply, done: (err?: Error) => void) => void)
        .call(self, request, reply, (err?: Error) => {
          reply.raw.off('close', answered)
          if (err) reject(err); else resolve()
        })
    })
  }
  return (hook as (this: FastifyInstance, rq: FastifyRequest, rp: FastifyReply) => unknown).call(self, request, reply)
}

/** Throws an OptionsError naming the option when `fn` is not a function (checked once, at setup). */
export function requireFunction (name: string, fn: unknown): void {
  if (typeof fn !== 'function') throw new OptionsError(name, 'must be a function')
}
