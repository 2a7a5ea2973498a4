/**
 * The trusted browsers of the signed-in user, beside the session list: `GET /sessions/devices` lists them,
 * `DELETE /sessions/devices/:id` forgets one (404 unless it is a trusted browser of this user), `DELETE
 * /sessions/devices` forgets all. Session routes (cookie and XSRF, or a token); the DELETEs are refused cross-site
 * like logout. Forgetting needs no fresh sign-in: it only takes a shortcut away (the next login asks the second
 * factor again).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from '../../../lib/errors.js'
import type { CoreInternals } from '../signin/internals.js'
import { routeDoc as doc } from '../signin/scope.js'
import { checkCrossSite } from '../signin/login-audit.js'
import { signedInSession } from '../signin/reauth.js'
import type { TrustedDevices } from '../signin/trusted-devices.js'

export function deviceRoutes (scope: FastifyInstance, core: CoreInternals, devices: TrustedDevices): void {
  const userOf = async (request: FastifyRequest, reply: FastifyReply, changes: boolean): Promise<string> => {
    if (changes) checkCrossSite(core, request, 'logout')
    return (await signedInSession(core, request, reply)).user.id
  }

  scope.get('/sessions/devices', { schema: doc('The signed-in user\'s trusted browsers (they skip the second factor)') }, async (request, reply) => {
    return await devices.list(request, await userOf(request, reply, false))
  })

  const one = doc('Forgets one trusted browser of the signed-in user', { params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } })
  scope.delete<{ Params: { id: string } }>('/sessions/devices/:id', { schema: one }, async (request, reply) => {
    const forgotten = await devices.forget(request, await userOf(request, reply, true), [request.params.id])
    if (forgotten === 0) throw new HttpError(404, 'not found', 'no such trusted browser')
    return await reply.code(204).send()
  })

  const all = doc('Forgets every trusted browser of the signed-in user', { response: { 200: { type: 'object', properties: { forgotten: { type: 'integer' } }, required: ['forgotten'] } } })
  scope.delete('/sessions/devices', { schema: all }, async (request, reply) => {
    return { forgotten: await devices.forget(request, await userOf(request, reply, true)) }
  })
}
