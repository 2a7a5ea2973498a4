/**
 * timeout: a deadline per request. A request whose answer has not started `timeout` ms after it arrived is
 * answered 503 `{error, details, code: "GATEHOUSE_TIMEOUT"}` (or 504 with `status: 504`, what go-pkgz/rest's
 * `Timeout` sends; 503 is what Go's `http.TimeoutHandler` sends), through Fastify's reply, so `onSend` hooks
 * (CORS, secure headers) and the request log still see it.
 *
 * What it cannot do: stop the handler. JavaScript has no way to interrupt a running function, so the handler
 * runs on; whatever it answers later is dropped (Fastify logs "Reply was already sent" at warn level). Handlers
 * that do expensive work should check `reply.sent` before each step. An answer already under way (headers sent,
 * a stream flowing) is left alone: a 503 can no longer be sent then.
 *
 * The clock starts in `onRequest` (registered early, it covers body parsing too) and stops when the answer ends
 * or the client goes away; nothing is left scheduled.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, OptionsError, sendError } from '../../lib/errors.js'
import type { ToolkitHook } from './hook.js'

export interface TimeoutOptions {
  /** Milliseconds from the request's arrival to the deadline: an integer from 1 to 2147483647. Required. */
  timeout: number
  /** The status of the answer at the deadline: 503 (default) or 504. */
  status?: 503 | 504 | undefined
}

const MAX_DELAY = 2 ** 31 - 1
const TIMER = Symbol('gatehouse.timeout')
type TimedRequest = FastifyRequest & { [TIMER]?: NodeJS.Timeout | undefined }

interface Deadline { ms: number; status: 503 | 504 }

function compile (opts: TimeoutOptions): Deadline {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('timeout', 'must be an object')
  const ms = opts.timeout
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 1 || ms > MAX_DELAY) {
    throw new OptionsError('timeout.timeout', `must be an integer of milliseconds from 1 to ${MAX_DELAY}`)
  }
  const status = opts.status ?? 503
  if (status !== 503 && status !== 504) throw new OptionsError('timeout.status', 'must be 503 or 504')
  return { ms, status }
}

function expire (deadline: Deadline, request: TimedRequest, reply: FastifyReply): void {
  request[TIMER] = undefined
  if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) return
  sendError(reply, deadline.status, 'request timeout', `no answer within ${deadline.ms} ms`, ErrorCodes.TIMEOUT)
}

function start (deadline: Deadline, request: TimedRequest, reply: FastifyReply): void {
  clear(request)
  request[TIMER] = setTimeout(expire, deadline.ms, deadline, request, reply)
}

function clear (request: TimedRequest): void {
  const timer = request[TIMER]
  if (timer !== undefined) { clearTimeout(timer); request[TIMER] = undefined }
}

/**
 * Route-level form: `{ onRequest: timeoutHook(2000) }`. The timer is cleared when the answer ends or the client
 * goes away (one `close` listener on the response), so it fits route options, `maybe` and `wrap`.
 */
export function timeoutHook (timeout: number, opts: Omit<TimeoutOptions, 'timeout'> = {}): ToolkitHook {
  const deadline = compile({ ...opts, timeout })
  return async function timeoutHook (request, reply) {
    start(deadline, request, reply)
    reply.raw.once('close', () => { clear(request) })
  }
}

const timeoutPluginImpl: FastifyPluginAsync<TimeoutOptions> = async (fastify, opts) => {
  const deadline = compile(opts)
  // Callback-style hooks: no promise per request. onResponse ends the clock of an answered request,
  // onRequestAbort that of a client that left.
  fastify.addHook('onRequest', (request, reply, done) => { start(deadline, request, reply); done() })
  fastify.addHook('onResponse', (request, _reply, done) => { clear(request); done() })
  fastify.addHook('onRequestAbort', (request, done) => { clear(request); done() })
}

/** `fastify.register(timeoutPlugin, { timeout: 5000 })`: every route of the context gets the deadline. */
export const timeoutPlugin = fp(timeoutPluginImpl, { name: 'gatehouse-timeout', fastify: '5.x' })
