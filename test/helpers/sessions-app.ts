/**
 * Test helper for the session-list tests: the session app of the core tests, plus calls of the list's routes with
 * a client's cookies and XSRF header.
 */
import type { Client } from './client.js'
import { coreOf } from '../../plugins/core/signin/internals.js'
import type { SessionList } from '../../plugins/core/sessions/sessions.js'
import { sessionApp, xsrfName, type SessionApp } from './session-app.js'
import type { AuthOptions } from '../../auth.js'
import type { FastifyInstance } from 'fastify'

export const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'
export const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'

export interface ListApp extends SessionApp {
  /** Signs `name` in from a browser sending `userAgent`. */
  loginAs (name: string, userAgent?: string): Promise<Client>
  /** GET /auth/sessions. */
  list (c: Client): Promise<Response>
  /** DELETE /auth/sessions[/id] with the client's XSRF header (unless `headers` replaces it). */
  end (c: Client, id?: string, headers?: Record<string, string>): Promise<Response>
  /** The core's session list. */
  sessions: SessionList
}

export async function listApp (opts: Partial<AuthOptions> = {}, setup?: (app: FastifyInstance) => void): Promise<ListApp> {
  const s = await sessionApp(opts, setup)
  const xsrf = (c: Client): Record<string, string> => ({ 'x-xsrf-token': c.jar.get(xsrfName(c)) ?? '' })
  return {
    ...s,
    async loginAs (name, userAgent = FIREFOX_LINUX) {
      const c = s.client()
      const fetch = c.fetch
      c.fetch = async (path, init = {}) => await fetch(path, { ...init, headers: { 'user-agent': userAgent, ...init.headers as Record<string, string> } })
      const r = await c.fetch('/auth/local/login', { method: 'POST', form: { user: name, passwd: 'x' } })
      if (r.status !== 200) throw new Error(`login of ${name} answered ${r.status}: ${await r.text()}`)
      return c
    },
    list: async (c) => await c.fetch('/auth/sessions', { headers: xsrf(c) }),
    end: async (c, id, headers) => await c.fetch(id === undefined ? '/auth/sessions' : `/auth/sessions/${encodeURIComponent(id)}`, { method: 'DELETE', headers: headers ?? xsrf(c) }),
    sessions: coreOf(s.app).sessions!
  }
}
