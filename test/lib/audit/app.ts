/**
 * An app for the audit tests: the root plugin with a direct provider (`local`, users alice and bob), a verified
 * provider (`mail`, whose sender keeps the messages), a private route, and every audit event of the instance
 * collected through `onEvent`. Requests go through `inject` with a small cookie jar.
 */
import Fastify, { type FastifyInstance, type InjectOptions, type LightMyRequestResponse } from 'fastify'
import { authPlugin, type AuthOptions } from '../../../auth.js'
import type { AuditEvent } from '../../../lib/audit/events.js'

export const SECRET = 'audit-tests-secret-0123456789abcdef'
export const PASSWORDS: Record<string, string> = { alice: 'audit-pw-correct-horse', bob: 'bob-secret' }

export interface AuditApp { app: FastifyInstance; events: AuditEvent[]; outbox: string[] }

export async function auditApp (extra: Partial<AuthOptions> = {}): Promise<AuditApp> {
  const events: AuditEvent[] = []
  const outbox: string[] = []
  const app = Fastify()
  await app.register(authPlugin, {
    secret: () => SECRET,
    url: 'http://127.0.0.1',
    onEvent: (e) => { events.push(e) },
    providers: [
      { kind: 'direct', name: 'local', checker: (u, p) => PASSWORDS[u] === p },
      { kind: 'verify', name: 'mail', template: 'link {{.Token}}', sender: (_a: string, text: string) => { outbox.push(text) } }
    ],
    ...extra
  })
  app.get('/private', { preHandler: app.auth.authenticate }, async (req) => ({ name: req.user!.name }))
  await app.ready()
  return { app, events, outbox }
}

/** Cookies kept between injected requests (the session and XSRF cookies), sent back with the XSRF header. */
export class Jar {
  readonly cookies = new Map<string, string>()
  take (res: LightMyRequestResponse): LightMyRequestResponse {
    for (const c of res.cookies as Array<{ name: string; value: string; maxAge?: number }>) {
      if (c.value === '' || c.maxAge === 0) this.cookies.delete(c.name)
      else this.cookies.set(c.name, c.value)
    }
    return res
  }

  /** Headers of a signed-in request: the cookies, and the XSRF header unless `xsrf` is false. */
  headers (xsrf = true): Record<string, string> {
    const h: Record<string, string> = { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
    const x = this.cookies.get('XSRF-TOKEN')
    if (xsrf && x !== undefined) h['x-xsrf-token'] = x
    return h
  }

  async inject (app: FastifyInstance, opts: InjectOptions & { xsrf?: boolean }): Promise<LightMyRequestResponse> {
    const { xsrf, ...rest } = opts
    return this.take(await app.inject({ ...rest, headers: { ...this.headers(xsrf), ...(rest.headers ?? {}) } }))
  }
}

/** Signs `user` in with the password login; the jar then holds the session. */
export async function signIn (app: FastifyInstance, user = 'alice', query = ''): Promise<Jar> {
  const jar = new Jar()
  const res = await jar.inject(app, { method: 'POST', url: `/auth/local/login${query}`, payload: { user, passwd: PASSWORDS[user] } })
  if (res.statusCode !== 200) throw new Error(`sign-in of ${user} answered ${res.statusCode}: ${res.body}`)
  return jar
}

/** The events' types, in order. */
export const typesOf = (events: readonly AuditEvent[]): string[] => events.map((e) => e.type)
