/**
 * The app fixture of the tests that need no socket: `injectApp` builds a Fastify app, lets the test register
 * what it needs, readies it, and hands back a `fetch` that goes through `app.inject` (no port, no HTTP parser,
 * no connection to close) but answers a WHATWG `Response`, like the real thing, so that a test reads the same
 * whether its app listens or not. `client` (test/helpers/client.ts) takes that `fetch` for a cookie jar.
 *
 * Differences from a real `fetch`, on purpose: redirects are never followed (each hop is the test's to assert),
 * and a compressed body comes back as sent (`content-encoding` is the test's to decode). Use `listen` when
 * the wire matters: real browsers, raw sockets, peers that misbehave, timeouts of a connection.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { client, CookieJar, type Client } from './client.js'

/** The base URL of an injected app; only its host reaches the app (as the Host header). */
export const INJECT_BASE = 'http://127.0.0.1'

/** A `fetch` over `app.inject`: same arguments, same `Response`, no socket. */
export type InjectFetch = (input: string | URL, init?: RequestInit) => Promise<Response>

export interface InjectedApp {
  app: FastifyInstance
  /** Where the app "is": `INJECT_BASE`. */
  base: string
  fetch: InjectFetch
  /** A client with its own cookie jar (or `jar`), sending through `fetch`. */
  client: (jar?: CookieJar) => Client
}

/** Statuses whose answer has no body (a `Response` refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304])

/** A request body as `inject` takes it, and the content type `fetch` would give it. */
function payloadOf (body: RequestInit['body']): { payload?: string | Buffer; type?: string } {
  if (body === undefined || body === null) return {}
  if (typeof body === 'string') return { payload: body, type: 'text/plain;charset=UTF-8' }
  if (body instanceof URLSearchParams) return { payload: body.toString(), type: 'application/x-www-form-urlencoded;charset=UTF-8' }
  if (body instanceof ArrayBuffer) return { payload: Buffer.from(body) }
  if (ArrayBuffer.isView(body)) return { payload: Buffer.from(body.buffer, body.byteOffset, body.byteLength) }
  throw new TypeError('injectFetch: give the body as a string, URLSearchParams or bytes')
}

/** `fetch` for `app`: the URL's path and query are the request's, its host the Host header. */
export function injectFetch (app: FastifyInstance): InjectFetch {
  return async (input, init = {}) => {
    const url = new URL(String(input), INJECT_BASE)
    const headers: Record<string, string> = { host: url.host }
    const { payload, type } = payloadOf(init.body)
    if (type !== undefined) headers['content-type'] = type
    new Headers(init.headers).forEach((value, name) => { headers[name] = value })
    const method = (init.method ?? 'GET').toUpperCase()
    const res = await app.inject({ method: method as 'GET', url: url.pathname + url.search, headers, ...(payload === undefined ? {} : { payload }) })
    const answer = new Headers()
    for (const [name, value] of Object.entries(res.headers)) {
      for (const one of [value ?? []].flat()) answer.append(name, String(one))
    }
    const body = NULL_BODY.has(res.statusCode) || method === 'HEAD' ? null : res.rawPayload
    return new Response(body, { status: res.statusCode, statusText: res.statusMessage, headers: answer })
  }
}

/** Builds an app, runs `setup` on it, readies it; the caller closes it (`t.teardown(() => app.close())`). */
export async function injectApp (setup: (app: FastifyInstance) => Promise<void> | void, opts: FastifyServerOptions = {}): Promise<InjectedApp> {
  const app = Fastify(opts)
  await setup(app)
  await app.ready()
  const fetch = injectFetch(app)
  return { app, base: INJECT_BASE, fetch, client: (jar = new CookieJar()) => client(INJECT_BASE, jar, fetch) }
}
