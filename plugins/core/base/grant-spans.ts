/**
 * Spans of the registered clients' endpoints (OpenTelemetry, when the host registers an SDK): one per request of
 * `/token` (`gatehouse.token`, with its grant type), `/revoke` (`gatehouse.revoke`), `/device/code`
 * (`gatehouse.device.code`) and `/authorize` (`gatehouse.authorize`), children of the request's span. Attributes:
 * the registered client's id, the grant type (a supported one, else `_OTHER`), the outcome and, on a refusal,
 * `error.type` (the RFC 6749 error code). Never a token, a code, a user code or a verifier: the handlers note only
 * what they have checked against the registered clients and grants.
 */
import type { Attributes } from '@opentelemetry/api'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { telemetry } from '../../../lib/telemetry/api.js'
import { failSpan, inSpan } from '../../../lib/telemetry/spans.js'

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>

/** What a request's span will say, noted by its handler as it goes. */
export interface GrantNote {
  /** A registered client's id. */
  client?: string | undefined
  /** A supported `grant_type`, or `_OTHER`. */
  grantType?: string | undefined
  /** What became of the request when it did not fail: `code`, `sign_in`, `confirmation`, `revoked`, `unknown_token`. */
  result?: string | undefined
  /** A refusal answered without a throw (an authorization error sent back to the redirect URI): its RFC 6749 code. */
  error?: string | undefined
}

const notes = new WeakMap<FastifyRequest, GrantNote>()

/** Adds to the request's note; nothing happens when telemetry is off (no span, no note). */
export function noteGrant (request: FastifyRequest, note: GrantNote): void {
  const current = notes.get(request)
  if (current !== undefined) Object.assign(current, note)
}

/** `handler` inside a span `name` (just `handler` without an SDK). */
export function traced (name: string, handler: Handler): Handler {
  return async function tracedHandler (request, reply) {
    if (telemetry.state === undefined) return await handler(request, reply)
    const note: GrantNote = {}
    notes.set(request, note)
    return await inSpan(name, {}, async (span) => {
      let ok = false
      try {
        const answered = await handler(request, reply)
        ok = reply.statusCode < 400 && note.error === undefined
        if (!ok && span !== undefined) failSpan(span, note.error ?? String(reply.statusCode))
        return answered
      } finally {
        span?.setAttributes(attributesOf(note, ok))
      }
    })
  }
}

function attributesOf (note: GrantNote, ok: boolean): Attributes {
  const attributes: Attributes = { 'gatehouse.outcome': ok ? 'success' : 'failure' }
  if (note.client !== undefined) attributes['gatehouse.client.id'] = note.client
  if (note.grantType !== undefined) attributes['gatehouse.grant_type'] = note.grantType
  if (note.result !== undefined) attributes['gatehouse.result'] = note.result
  return attributes
}
