/**
 * The client side of the scale benchmark (bench/scale.ts): a user as a browser is to the instances behind a
 * load balancer without sticky sessions. A `Browser` keeps every cookie an answer sets (a refreshed session
 * replaces the old one, a logout removes it) and sends the XSRF header from its cookie; the three ways in are a
 * password login, the dev OAuth2 round trip and the e-mail confirmation link. A client without cookies (the
 * registered client `bench`) gets a token pair and refreshes it at `/auth/token`.
 */
import { devLogin } from './login.js'
import { GRANT_CLIENT, SCALE_PASSWORD } from './scale-app.js'
import type { ServerProcess } from './server-process.js'

export const base = (s: ServerProcess): string => `http://127.0.0.1:${s.hello.port}`

/** What one request of a signed-in user came back with. */
export interface Answer { status: number; refreshed: boolean; ms: number }

export class Browser {
  private readonly jar = new Map<string, string>()
  constructor (private readonly site: Record<string, string>, setCookie: string[] = []) { this.take(setCookie) }

  /** Keeps the cookies of Set-Cookie lines (an empty value removes one); true when the session cookie changed. */
  take (setCookie: string[]): boolean {
    let session = false
    for (const line of setCookie) {
      const pair = line.split(';', 1)[0]!
      const eq = pair.indexOf('=')
      const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)]
      if (name === 'JWT') session = true
      if (value === '') this.jar.delete(name)
      else this.jar.set(name, value)
    }
    return session
  }

  get signedIn (): boolean { return this.jar.has('JWT') }

  headers (): Record<string, string> {
    return { ...this.site, cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '), 'x-xsrf-token': this.jar.get('XSRF-TOKEN') ?? '' }
  }

  /** A GET of `path` on `s`, the answer's cookies kept. */
  async get (s: ServerProcess, path: string): Promise<Answer> {
    const start = process.hrtime.bigint()
    const r = await fetch(`${base(s)}${path}`, { headers: this.headers(), redirect: 'manual' })
    await r.arrayBuffer()
    const refreshed = this.take(r.headers.getSetCookie())
    return { status: r.status, refreshed, ms: Number(process.hrtime.bigint() - start) / 1e6 }
  }
}

/** A password login of `user` on `s`. */
export async function passwordLogin (s: ServerProcess, user: string): Promise<Browser> {
  const r = await fetch(`${base(s)}/auth/local/login`, {
    method: 'POST', headers: { ...s.hello.headers, 'content-type': 'application/json' }, body: JSON.stringify({ user, passwd: SCALE_PASSWORD })
  })
  await r.arrayBuffer()
  if (r.status !== 200) throw new Error(`password login of ${user} answered ${r.status}`)
  return new Browser(s.hello.headers, r.headers.getSetCookie())
}

/** The dev OAuth2 round trip on `s` (its one-time state is taken from the shared store). */
export async function oauth2Login (s: ServerProcess): Promise<Browser> {
  return new Browser(s.hello.headers, await devLogin(base(s), s.hello.headers))
}

/**
 * An e-mail login: the message is asked for on `sender`, read from that instance's outbox, and the link is
 * opened on `opener` (another instance when there are several: the one-time check must hold across them).
 */
export async function emailLogin (sender: ServerProcess, opener: ServerProcess, user: string): Promise<Browser> {
  const address = `${user}@bench.test`
  const asked = await fetch(`${base(sender)}/auth/email/login?user=${encodeURIComponent(user)}&address=${encodeURIComponent(address)}`, { headers: sender.hello.headers })
  await asked.arrayBuffer()
  if (asked.status !== 200) throw new Error(`e-mail login of ${user}: asking for the message answered ${asked.status}`)
  const mail = await fetch(`${base(sender)}/bench/outbox?address=${encodeURIComponent(address)}`)
  const { token } = await mail.json() as { token: string }
  const browser = new Browser(opener.hello.headers)
  const opened = await browser.get(opener, `/auth/email/login?token=${token}&sess=1`)
  if (opened.status >= 400 || !browser.signedIn) throw new Error(`e-mail login of ${user}: the link answered ${opened.status} without a session`)
  return browser
}

/** The form body of a refresh grant of the benchmarks' registered client (bench/scale-app.ts, refresh-grants.ts). */
export function refreshGrantBody (token: string): string {
  return `grant_type=refresh_token&client_id=${GRANT_CLIENT}&refresh_token=${encodeURIComponent(token)}`
}

/** The first token pair of a new family of `user` on `s` (`POST /bench/pair`): its refresh token. */
export async function issuePair (s: ServerProcess, user: string): Promise<string> {
  const r = await fetch(`${base(s)}/bench/pair`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user }) })
  if (r.status !== 200) throw new Error(`a token pair for ${user} answered ${r.status}: ${await r.text()}`)
  return (await r.json() as { refresh_token: string }).refresh_token
}

/** One refresh grant on `s` (`POST /auth/token`): the rotated refresh token it answers. */
export async function refreshGrant (s: ServerProcess, token: string): Promise<string> {
  const r = await fetch(`${base(s)}/auth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: refreshGrantBody(token) })
  if (r.status !== 200) throw new Error(`a refresh grant answered ${r.status}: ${await r.text()}`)
  return (await r.json() as { refresh_token: string }).refresh_token
}
