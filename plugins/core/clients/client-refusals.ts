/**
 * What a developer wiring a registered client needs when `/authorize` or `/token` refuses it: one warning line per
 * refused request, naming the `client_id` and `redirect_uri` the client sent beside what is registered, and why.
 * The client gets the RFC 6749 answer, which must not list the registered clients; the log is the app's own.
 *
 * Only those two fields are ever written, both of which a client sends in the clear (in a URL): never a code, a
 * verifier, a token, a state or a secret. They are quoted and cut short, so a request cannot write lines of its own.
 */
import type { FastifyRequest } from 'fastify'
import { requestLogger, type Logger } from '../../../lib/logging/logger.js'
import type { RegisteredClient } from '../base/clients.js'

/** The longest sent value written to the log (a client id is at most 64, a redirect URI rarely more). */
const MAX_SHOWN = 200

export type ClientRefusalLog = (request: FastifyRequest, endpoint: '/authorize' | '/token', why: string) => void

/** The warning writer of one core: `logger` is the package's (Fastify's log, with the request's id, by default). */
export function clientRefusalLog (logger: Logger, clients: ReadonlyMap<string, RegisteredClient>): ClientRefusalLog {
  return (request, endpoint, why) => {
    const sent = sentFields(request)
    const client = sent.clientId === undefined ? undefined : clients.get(sent.clientId)
    const registered = client === undefined
      ? `registered clients: ${[...clients.keys()].join(', ')}`
      : client.kind === 'device'
        ? `"${client.id}" is a device client (no redirect URI)`
        : `registered redirect URIs of "${client.id}": ${[...client.redirectUris].join(', ')}${client.loopbackUris.size > 0 ? ' (loopback ones on any port)' : ''}`
    requestLogger(logger, request).logf('[WARN] %s refused (%s): client_id %s, redirect_uri %s sent; %s',
      endpoint, why, shown(sent.clientId), shown(sent.redirectUri), registered)
  }
}

/** The two fields as the request carries them: the query of `GET /authorize`, the form of a `POST`. */
function sentFields (request: FastifyRequest): { clientId: string | undefined; redirectUri: string | undefined } {
  const from = (request.method === 'GET' ? request.query : request.body) as Record<string, unknown> | null | undefined
  const text = (v: unknown): string | undefined => typeof v === 'string' ? v : undefined
  return { clientId: text(from?.client_id), redirectUri: text(from?.redirect_uri) }
}

/** A sent value quoted (control characters escaped) and cut short; `none` when absent. */
function shown (value: string | undefined): string {
  if (value === undefined) return 'none'
  const cut = value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}…` : value
  return JSON.stringify(cut)
}
