/**
 * A cookie-following test browser for OAuth2 flows that cross several servers: host- and path-scoped cookies
 * (RFC 6265: ports do not separate cookies), Max-Age/Expires, redirects followed hop by hop (303/302 → GET),
 * HTML form submission, and a hosts table so the app can have a real-looking public URL (`http://app.test`)
 * that resolves to its loopback port. Nothing is ever fetched off loopback: a redirect elsewhere stops the
 * navigation and is reported.
 */
import { parseSetCookie } from './client.js'

interface Cookie { name: string; value: string; host: string; path: string; expires: number | undefined; attrs: Record<string, string | true> }

export interface Hop { method: string; url: string; status: number; location?: string | undefined }

export interface Navigation {
  /** The last response (a 200 page, a JSON error, or a redirect that was not followed). */
  res: Response
  /** Its body, read once. */
  body: string
  /** Every request made, in order. */
  hops: Hop[]
  /** The URL of the last request. */
  url: string
}

export interface RequestInit2 { method?: string; form?: Record<string, string>; headers?: Record<string, string> }

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]'])

export class Browser {
  private cookies: Cookie[] = []
  /** Host name → loopback base URL it resolves to (e.g. `app.test` → `http://127.0.0.1:40123`). */
  readonly hosts = new Map<string, string>()

  /** One request, no redirect following; cookies sent and stored. */
  async request (url: string, init: RequestInit2 = {}): Promise<Response> {
    const target = new URL(url)
    const actual = this.resolve(target)
    const headers = new Headers(init.headers)
    const cookie = this.cookieHeader(target)
    if (cookie !== '') headers.set('cookie', cookie)
    let body: string | undefined
    if (init.form !== undefined) {
      headers.set('content-type', 'application/x-www-form-urlencoded')
      body = new URLSearchParams(init.form).toString()
    }
    const res = await fetch(actual, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body, redirect: 'manual' })
    this.store(target, res)
    return res
  }

  /** Requests and follows redirects on loopback hosts (at most 20 hops). */
  async navigate (url: string, init: RequestInit2 = {}): Promise<Navigation> {
    const hops: Hop[] = []
    let current = url
    let req = init
    for (let i = 0; i < 20; i++) {
      const res = await this.request(current, req)
      const location = res.headers.get('location') ?? undefined
      hops.push({ method: req.method ?? (req.form !== undefined ? 'POST' : 'GET'), url: current, status: res.status, location })
      if (res.status < 300 || res.status > 399 || location === undefined) return { res, body: await res.text(), hops, url: current }
      const next = new URL(location, current)
      if (!this.reachable(next)) return { res, body: await res.text(), hops, url: current }
      await res.body?.cancel()
      // 307/308 repeat the method and body; every other redirect becomes a GET.
      if (res.status !== 307 && res.status !== 308) req = { headers: init.headers }
      current = next.href
    }
    throw new Error('too many redirects')
  }

  /** Submits the first (or the `index`-th) form of an HTML page, with `fields` overriding its inputs. */
  async submitForm (pageUrl: string, html: string, fields: Record<string, string> = {}, index = 0): Promise<Navigation> {
    const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)]
    const form = forms[index]
    if (form === undefined) throw new Error(`no form #${index} in page ${pageUrl}`)
    const action = attr(form[1]!, 'action') ?? pageUrl
    const method = (attr(form[1]!, 'method') ?? 'GET').toUpperCase()
    const values: Record<string, string> = {}
    for (const input of form[2]!.matchAll(/<(?:input|button)\b([^>]*)>/gi)) {
      const name = attr(input[1]!, 'name')
      if (name !== undefined && !/type=["']?submit/i.test(input[1]!)) values[name] = attr(input[1]!, 'value') ?? ''
    }
    Object.assign(values, fields)
    const target = new URL(decodeEntities(action), pageUrl)
    if (method === 'POST') return await this.navigate(target.href, { method: 'POST', form: values })
    for (const [k, v] of Object.entries(values)) target.searchParams.set(k, v)
    return await this.navigate(target.href)
  }

  /** The value of a cookie the browser would send to `url`, or undefined. */
  cookieFor (url: string, name: string): string | undefined {
    return this.matching(new URL(url)).find((c) => c.name === name)?.value
  }

  /** Raw attributes of a stored cookie (for asserting Path, HttpOnly, SameSite…). */
  cookieAttrs (name: string): Record<string, string | true> | undefined {
    return this.cookies.find((c) => c.name === name)?.attrs
  }

  /** Forgets every cookie (a fresh browser). */
  clear (): void { this.cookies = [] }

  private reachable (u: URL): boolean {
    return (u.protocol === 'http:' || u.protocol === 'https:') && (this.hosts.has(u.host) || LOOPBACK.has(u.hostname))
  }

  private resolve (u: URL): string {
    const mapped = this.hosts.get(u.host)
    if (mapped !== undefined) return mapped + u.pathname + u.search
    if (!LOOPBACK.has(u.hostname)) throw new Error(`test browser refuses to leave loopback: ${u.href}`)
    return u.href
  }

  private matching (u: URL): Cookie[] {
    const now = Date.now()
    this.cookies = this.cookies.filter((c) => c.expires === undefined || c.expires > now)
    return this.cookies.filter((c) => c.host === u.hostname && pathMatches(u.pathname, c.path))
  }

  private cookieHeader (u: URL): string {
    return this.matching(u).map((c) => `${c.name}=${c.value}`).join('; ')
  }

  private store (u: URL, res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const { name, value, attrs } = parseSetCookie(line)
      const path = typeof attrs.path === 'string' && attrs.path.startsWith('/') ? attrs.path : defaultPath(u.pathname)
      let expires: number | undefined
      if (typeof attrs['max-age'] === 'string') expires = Date.now() + Number(attrs['max-age']) * 1000
      else if (typeof attrs.expires === 'string') expires = Date.parse(attrs.expires)
      this.cookies = this.cookies.filter((c) => !(c.name === name && c.host === u.hostname && c.path === path))
      if (expires !== undefined && expires <= Date.now()) continue
      this.cookies.push({ name, value, host: u.hostname, path, expires, attrs })
    }
  }
}

function pathMatches (reqPath: string, cookiePath: string): boolean {
  if (reqPath === cookiePath) return true
  if (!reqPath.startsWith(cookiePath)) return false
  return cookiePath.endsWith('/') || reqPath[cookiePath.length] === '/'
}

function defaultPath (p: string): string {
  const i = p.lastIndexOf('/')
  return i <= 0 ? '/' : p.slice(0, i)
}

function attr (tag: string, name: string): string | undefined {
  const m = new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag)
  if (m === null) return undefined
  return decodeEntities(m[1] ?? m[2] ?? m[3] ?? '')
}

function decodeEntities (s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#39;|&#x27;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
}
