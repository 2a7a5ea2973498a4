/**
 * The examples of docs/reference/events.md, compiled (lines as written there; test/docs/readme-examples.test.ts
 * checks they stay the same).
 */
import Fastify from 'fastify'
import diagnostics from 'node:diagnostics_channel'
import authPlugin, { AUDIT_CHANNEL, type AuditEvent, type AuditEventOf, type CredChecker } from '../../index.js'

declare const siem: { send(record: Record<string, unknown>): void }
declare const checker: CredChecker
const app = Fastify()

diagnostics.subscribe(AUDIT_CHANNEL, (message) => {
  const event = message as AuditEvent
  if (event.type === 'login.failed') siem.send({ ...event, severity: 'warning' })
})

await app.register(authPlugin, {
  secret: () => process.env.SESSION_SECRET!,
  url: 'https://example.com',
  onEvent: (event) => { app.log.info({ audit: event }, event.type) },
  providers: [{ kind: 'direct', name: 'local', checker }]
})

// The union narrows on `type`: each event's own fields are typed.
export function describe (event: AuditEvent): string {
  switch (event.type) {
    case 'lockout.started': return `${event.scope} locked for ${event.durationMs} ms`
    case 'session.revoked': return `ended by ${event.by}`
    case 'key.rotated': return `${event.kid} → ${event.currentKid}`
    default: return event.reason
  }
}
export const locked: AuditEventOf<'lockout.started'>['scope'] = 'ip'
