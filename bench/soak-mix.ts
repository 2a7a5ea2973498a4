/**
 * The mixed soak of the demo (`npm run bench -- soak`, case `demo-mix`): users come from many distinct addresses
 * (each cycle from the next of `SOAK_ADDRESSES` loopback addresses, 127.1.0.1 onwards: Linux routes all of
 * 127.0.0.0/8 to the loopback interface, so each is a client address of its own to the server, its throttling and
 * its logs), sign in by password (the demo's `alice`, captcha stand-in solved first) or through the dev OAuth2
 * server's login page as one of `SOAK_USERS` users (their pictures fetched and kept by the avatar proxy), make
 * `PRIVATE_CALLS` authenticated calls (the first one followed by the user's picture from the avatar plugin) and
 * sign out. Every request on a connection of its own from its address.
 */
import { request as httpRequest } from 'node:http'

/** An answer: status, the Set-Cookie lines, the Location, the body as text. */
export interface MixAnswer { status: number; setCookie: string[]; location: string | undefined; body: string }

/** Authenticated calls per signed-in user before the sign-out. */
export const PRIVATE_CALLS = 5
/** Sign-ins by password for every one by the dev OAuth2 server. */
const PASSWORD_EVERY = 2

/** One HTTP request from `localAddress`, without keep-alive. */
export async function send (url: string, localAddress: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<MixAnswer> {
  const u = new URL(url)
  return await new Promise((resolve, reject) => {
    const req = httpRequest({
      host: u.hostname === 'localhost' ? '127.0.0.1' : u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      method: init.method ?? 'GET',
      headers: { ...init.headers, ...(init.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(init.body)) }) },
      localAddress,
      agent: false
    }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (d: string) => { body += d })
      res.on('end', () => {
        const sc = res.headers['set-cookie'] ?? []
        resolve({ status: res.statusCode ?? 0, setCookie: sc, location: res.headers.location, body })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(init.body)
  })
}

/** The cookies of one site as a browser keeps them (an empty value removes one). */
class Jar {
  private readonly cookies = new Map<string, string>()
  take (lines: string[]): void {
    for (const line of lines) {
      const pair = line.split(';', 1)[0]!
      const eq = pair.indexOf('=')
      const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)]
      if (value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  get (name: string): string | undefined { return this.cookies.get(name) }
  header (): string { return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
}

/** What the mix did: cycles, and the answers by step and status. */
export interface MixCounts { cycles: number; statuses: Map<string, number> }

/** Counts an answer of `step`. */
export function count (counts: MixCounts, step: string, status: number): void {
  const key = `${step} ${status}`
  counts.statuses.set(key, (counts.statuses.get(key) ?? 0) + 1)
}

/** The n-th address of the pool: 127.1.0.1, 127.1.0.2, … (254 a /24, then the next /24). */
export function addressOf (n: number, pool: number): string {
  const i = n % pool
  return `127.${1 + Math.floor(i / (254 * 256))}.${Math.floor(i / 254) % 256}.${1 + (i % 254)}`
}

async function passwordSignIn (base: string, from: string, jar: Jar, counts: MixCounts): Promise<boolean> {
  const solved = await send(`${base}/captcha-standin/solve`, from, { method: 'POST' })
  count(counts, 'captcha', solved.status)
  if (solved.status !== 200) return false
  const token = (JSON.parse(solved.body) as { token: string }).token
  const login = await send(`${base}/auth/local/login`, from, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user: 'alice', passwd: 'alice-secret', 'cf-turnstile-response': token })
  })
  count(counts, 'password login', login.status)
  jar.take(login.setCookie)
  return login.status === 200
}

/** The dev provider's round trip through its server's login page, as `user`. */
async function devSignIn (base: string, from: string, jar: Jar, user: string, counts: MixCounts): Promise<boolean> {
  const start = await send(`${base}/auth/dev/login`, from, { headers: { cookie: jar.header() } })
  jar.take(start.setCookie)
  if (start.status !== 302 || start.location === undefined) {
    count(counts, 'dev start', start.status)
    return false
  }
  const page = await send(start.location, from)
  const serverJar = new Jar()
  serverJar.take(page.setCookie)
  const request = /name="request" value="([^"]+)"/.exec(page.body)?.[1]
  if (page.status !== 200 || request === undefined) {
    count(counts, 'dev page', page.status)
    return false
  }
  const form = new URLSearchParams({ request, user }).toString()
  const submitted = await send(new URL('/login/oauth/authorize', start.location).href, from, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: serverJar.header() }, body: form
  })
  if (submitted.location === undefined) {
    count(counts, 'dev submit', submitted.status)
    return false
  }
  const callback = await send(submitted.location, from, { headers: { cookie: jar.header() } })
  count(counts, 'dev login', callback.status)
  jar.take(callback.setCookie)
  return jar.get('JWT') !== undefined
}

/** One cycle from address `from`: a sign-in (by password, or the dev server as `user`), the calls, the sign-out. */
export async function mixCycle (base: string, from: string, n: number, user: string, counts: MixCounts): Promise<void> {
  const jar = new Jar()
  const signedIn = n % (PASSWORD_EVERY + 1) === PASSWORD_EVERY
    ? await devSignIn(base, from, jar, user, counts)
    : await passwordSignIn(base, from, jar, counts)
  if (!signedIn) return
  const headers = (): Record<string, string> => ({ cookie: jar.header(), 'x-xsrf-token': jar.get('XSRF-TOKEN') ?? '' })
  for (let i = 0; i < PRIVATE_CALLS; i++) {
    const r = await send(`${base}/api/private`, from, { headers: headers() })
    count(counts, 'private', r.status)
    jar.take(r.setCookie)
    // The user's picture, as a page showing the user loads it: served by the avatar plugin from its store (the
    // path of the link only: the demo's configured URL does not know the port it was given).
    const picture = i === 0 && r.status === 200 ? (JSON.parse(r.body) as { user?: { picture?: string } }).user?.picture : undefined
    if (picture !== undefined && picture !== '') {
      const image = await send(base + new URL(picture, base).pathname, from)
      count(counts, 'avatar', image.status)
    }
  }
  const out = await send(`${base}/auth/logout`, from, { method: 'POST', headers: headers() })
  count(counts, 'logout', out.status)
  counts.cycles++
}
