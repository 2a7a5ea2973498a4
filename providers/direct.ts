/**
 * Direct login: the host's credential checker decides. `POST /<name>/login?session=1|0` with a form or JSON
 * body `{user, passwd, aud}`, or `GET /<name>/login?user=&passwd=&aud=&session=` (query strings end up in
 * logs and histories: prefer POST).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from '../plugins/shared/errors.js'
import type { AuthProvider, CredChecker, GatehouseAuth } from '../plugins/core/types.js'
import { userId } from '../plugins/core/user.js'
import { queryText } from '../plugins/shared/query.js'

const MAX_USER = 256
const MAX_PASSWD = 4096
const MAX_SHORT = 2048

export function directProvider (auth: GatehouseAuth, name: string, checker: CredChecker): AuthProvider {
  if (typeof checker !== 'function') throw new TypeError(`fastify-gatehouse: direct provider "${name}" needs a checker function`)
  return {
    name,
    async login (request: FastifyRequest, reply: FastifyReply) {
      const query = (request.query ?? {}) as Record<string, unknown>
      const src = request.method === 'POST' ? bodyFields(request.body) : query
      const user = queryText(src, 'user', MAX_USER, true)!
      const passwd = secretField(src, 'passwd', MAX_PASSWD)
      const aud = queryText(src, 'aud', MAX_SHORT, false)
      const from = queryText(src, 'from', MAX_SHORT, false) ?? queryText(query, 'from', MAX_SHORT, false)
      let ok: boolean
      try {
        ok = await checker(user, passwd)
      } catch (err) {
        auth.logger.logf('[WARN] direct provider %s: checker failed: %s', name, err instanceof Error ? err.message : String(err))
        throw new HttpError(503, 'unavailable', 'credential check failed')
      }
      if (ok !== true) throw new HttpError(403, 'forbidden', 'incorrect user or password')
      return await auth.completeLogin(request, reply, {
        user: { name: user, id: userId(name, user) },
        aud,
        from,
        sessionOnly: query.session === '1'
      })
    },
    callback () { throw new HttpError(404, 'not found', 'direct providers have no callback') },
    logout (_request: FastifyRequest, reply: FastifyReply) {
      auth.tokens.reset(reply)
      return { status: 'logged out' }
    }
  }
}

function bodyFields (body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'bad request', 'expected a form or JSON object with user and passwd')
  return body as Record<string, unknown>
}

/** A password (or prepared hash): any characters, one value, bounded length. */
function secretField (src: Record<string, unknown>, key: string, max: number): string {
  const v = src[key]
  if (typeof v !== 'string' || v === '') throw new HttpError(400, 'bad request', `${key} is required`)
  if (v.length > max) throw new HttpError(400, 'bad request', `${key} is too long`)
  return v
}
