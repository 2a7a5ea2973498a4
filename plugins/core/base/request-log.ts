/**
 * Secret query values masked in Fastify's own request log on every route of the app, not only on the auth routes
 * (scope.ts does those): a query session (`?token=`) reaches the host's routes, and Fastify's `incoming request`
 * line prints `req.url` as sent.
 *
 * How, in Fastify 5: the `req` field of a request's log lines goes through the serializers of the request's child
 * logger, and pino gives a child created without serializers of its own the parent's serializers object itself
 * (not a copy). So the `req` serializer of the app's logger (`fastify.log`, found by pino's `pino.serializers`
 * symbol) is wrapped in place, once: every request from then on, on routes registered before or after the plugin,
 * the not-found handler's included, logs the URL masked, with whatever fields the host's own `serializers.req`
 * gives. A route's own `logSerializers.req` (copied into its child logger over the app's) is wrapped by an
 * `onRoute` hook of the app (routes registered after the plugin). A logger that is not pino has no such object:
 * nothing is installed, and `installed` is false (the host masks with the toolkit's `sanitizeUrl`).
 *
 * Not covered: the message of Fastify's default not-found line (`Route GET:/x?token=… not found`), which is text,
 * not a serialized field.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { sanitizeUrl } from '../../../lib/secret-keys.js'

type Serializer = (value: unknown) => unknown
type Serializers = Record<string, Serializer | undefined>

/** The keys a wrapped serializer masks; a second install (another app on one logger) adds its own. */
const masking = new WeakMap<Serializer, Set<string>>()

/**
 * Wraps the app logger's `req` serializer and every route's own one so that the `url` they give has the values
 * of `secretKeys` masked. Returns whether the app's logger could be reached (a pino logger).
 */
export function maskRequestLog (fastify: FastifyInstance, secretKeys: Iterable<string>): boolean {
  const keys = [...secretKeys]
  fastify.addHook('onRoute', (route) => {
    const own = route.logSerializers?.req as Serializer | undefined
    // Over the route's serializers (a prototype keeps those it inherits from its plugin's `logSerializers`).
    if (own !== undefined) route.logSerializers = Object.assign(Object.create(route.logSerializers!) as object, { req: masked(own, keys) })
  })
  const serializers = pinoSerializers(fastify.log)
  const base = serializers?.req
  if (serializers === undefined || typeof base !== 'function') return false
  serializers.req = masked(base, keys)
  return true
}

/** `serializer` with the `url` of its answer masked; a serializer wrapped already only learns the new keys. */
function masked (serializer: Serializer, keys: readonly string[]): Serializer {
  const known = masking.get(serializer)
  if (known !== undefined) {
    for (const k of keys) known.add(k)
    return serializer
  }
  const secret = new Set(keys)
  const wrapped: Serializer = (value) => {
    const out = serializer(value)
    if (out === null || typeof out !== 'object') return out
    const url = (out as { url?: unknown }).url
    return typeof url === 'string' && url.includes('?') ? { ...out, url: sanitizeUrl(url, secret) } : out
  }
  masking.set(wrapped, secret)
  return wrapped
}

/** pino's serializers object of `log` (own or inherited under the `pino.serializers` symbol), if it is pino. */
function pinoSerializers (log: FastifyBaseLogger): Serializers | undefined {
  for (let o: object | null = log; o !== null; o = Object.getPrototypeOf(o) as object | null) {
    const sym = Object.getOwnPropertySymbols(o).find((s) => s.description === 'pino.serializers')
    if (sym !== undefined) {
      const value = (log as unknown as Record<symbol, unknown>)[sym]
      return value !== null && typeof value === 'object' ? value as Serializers : undefined
    }
  }
  return undefined
}
