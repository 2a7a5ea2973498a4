/**
 * `GET {prefix}/<avatar_id>.image`. Only ids of the one valid shape reach the store (anything with `..`, `/`,
 * escapes, NUL or too long is a 404 before any lookup). Responses are PNG with headers that stop a browser
 * from treating them as anything else: `nosniff` and a CSP that sandboxes the document even if opened directly.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import { AVATAR_ID_RE, type AvatarStore } from '../../stores/index.js'
import { requestLogger, type Logger } from '../../lib/logging/logger.js'
import { sendError } from '../../lib/errors.js'

const FILE_RE = new RegExp(`^(${AVATAR_ID_RE.source.slice(1, -1)})\\.image$`)

export interface ServeConfig {
  store: AvatarStore
  maxAge: number
  logger: Logger
}

/** The avatar routes, in their own scope registered under the prefix, so that every 404 below it is JSON too. */
export function avatarRoutes (cfg: ServeConfig) {
  const cacheControl = `public, max-age=${cfg.maxAge}`
  return async function routes (scope: FastifyInstance): Promise<void> {
    scope.setNotFoundHandler((_request, reply) => notFound(reply))
    // A wildcard, not `/:file`: the router answers 414 to a parameter over its length limit and never
    // matches extra segments, whereas every path below the prefix must be a 404 JSON from here.
    const schema = { tags: ['auth'], summary: 'A user\'s avatar, `<avatar_id>.image` (PNG)' } as FastifySchema
    scope.get<{ Params: { '*': string } }>('/*', { schema }, async (request: FastifyRequest<{ Params: { '*': string } }>, reply: FastifyReply) => {
      const id = FILE_RE.exec(request.params['*'])?.[1]
      if (id === undefined) return notFound(reply)
      let contentId: string | null
      let bytes: Uint8Array | null = null
      try {
        // The content id first: a client revalidating gets its 304 without the image being read.
        contentId = await cfg.store.id(id)
        if (contentId !== null && !matches(request.headers['if-none-match'], contentId)) bytes = await cfg.store.get(id)
      } catch (err) {
        requestLogger(cfg.logger, request).logf('[WARN] avatar: store failed serving %s: %s', id, (err as Error)?.message ?? String(err))
        return sendError(reply.header('cache-control', 'no-store'), 503, 'avatar store unavailable')
      }
      if (contentId === null) return notFound(reply)
      const notModified = bytes === null && matches(request.headers['if-none-match'], contentId)
      // Removed between id() and get(): gone.
      if (bytes === null && !notModified) return notFound(reply)
      reply.header('etag', `"${contentId}"`)
        .header('cache-control', cacheControl)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox; frame-ancestors 'none'")
      if (bytes === null) return reply.code(304).send()
      const body = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      return reply.type('image/png').header('content-length', body.length).send(body)
    })
  }
}

/** 404 that no cache keeps: the avatar may exist a moment later, once its user logs in. */
function notFound (reply: FastifyReply): FastifyReply {
  return sendError(reply.header('cache-control', 'no-store'), 404, 'avatar not found')
}

/** If-None-Match against our (strong) ETag; weak comparison as RFC 9110 prescribes for this header. */
function matches (header: string | undefined, contentId: string): boolean {
  if (header === undefined) return false
  const tag = `"${contentId}"`
  return header.split(',').some((t) => {
    const v = t.trim()
    return v === '*' || v === tag || v === `W/${tag}`
  })
}
