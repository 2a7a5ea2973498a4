/**
 * A small HTTP client for tests: real fetch over loopback with a cookie jar that honours Max-Age, Expires
 * and deletion, and manual redirects (so tests can assert each hop).
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'

export interface StoredCookie { name: string; value: string; attrs: Record<string, string | true> }

/** One Set-Cookie line: name, value and attributes (names lower-cased, flags as `true`). */
export function parseSetCookie (line: string): StoredCookie {
  const [pair, ...rest] = line.split(';')
  const eq = pair!.indexOf('=')
  const attrs: Record<string, string | true> = {}
  for (const a of rest) {
    const i = a.indexOf('=')
    if (i < 0) attrs[a.trim().toLowerCase()] = true
    else attrs[a.slice(0, i).trim().toLowerCase()] = a.slice(i + 1).trim()
  }
  return { name: pair!.slice(0, eq).trim(), value: pair!.slice(eq + 1).trim(), attrs }
}

export class CookieJar {
  readonly cookies = new Map<string, StoredCookie>()

  /** Stores every Set-Cookie of a response; Max-Age=0 or a past Expires deletes. */
  take (res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const { name, value, attrs } = parseSetCookie(line)
      const expired = attrs['max-age'] === '0' || (typeof attrs.expires === 'string' && Date.parse(attrs.expires) <= Date.now())
      if (expired || value === '') this.cookies.delete(name)
      else this.cookies.set(name, { name, value, attrs })
    }
  }

  get (name: string): string | undefined { return this.cookies.get(name)?.value }

  header (): string {
    return [...this.cookies.values()].map((c) => `${c.name}=${c.value}`).join('; ')
  }
}

export interface Client {
  base: string
  jar: CookieJar
  /** fetch relative to the server, sending and storing cookies; redirects are not followed. */
  fetch (path: string, init?: RequestInit & { json?: unknown; form?: Record<string, string> }): Promise<Response>
}

/** A client of `base`; `send` is the global `fetch`, or one over `app.inject` (test/helpers/app.ts). */
export function client (base: string, jar = new CookieJar(), send: (input: URL, init: RequestInit) => Promise<Response> = fetch): Client {
  return {
    base,
    jar,
    async fetch (path, init = {}) {
      const headers = new Headers(init.headers)
      const cookie = jar.header()
      if (cookie !== '' && !headers.has('cookie')) headers.set('cookie', cookie)
      let body = init.body
      if (init.json !== undefined) { headers.set('content-type', 'application/json'); body = JSON.stringify(init.json) }
      if (init.form !== undefined) { headers.set('content-type', 'application/x-www-form-urlencoded'); body = new URLSearchParams(init.form).toString() }
      const res = await send(new URL(path, base), { ...init, headers, body: body ?? null, redirect: 'manual' })
      jar.take(res)
      return res
    }
  }
}

/** Builds, starts (127.0.0.1, port 0) and returns an app plus its base URL; the caller closes it. */
export async function listen (setup: (app: FastifyInstance) => Promise<void> | void, opts: FastifyServerOptions = {}): Promise<{ app: FastifyInstance; base: string }> {
  const app = Fastify(opts)
  await setup(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  return { app, base: `http://127.0.0.1:${port}` }
}
