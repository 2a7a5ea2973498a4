/**
 * Audit events of an OIDC login against a real OpenID Provider (the `oidc-provider` package on 127.0.0.1, PKCE
 * required, RS256 ID tokens), with the test browser of test/oauth2: a completed login emits login.succeeded for the
 * provider with the hashed user id and the audience; a forged `state` emits login.failed state_mismatch. No event
 * carries the authorization code, the state, the client secret or a token.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { exportJWK, generateKeyPair } from 'jose'
import { userId } from '../../../lib/user.js'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { oidcProvider } from '../../../providers/index.js'
import { APP_URL, startApp } from '../../helpers/oauth2-app.js'
import { signInAt } from '../../helpers/oidc-server.js'

interface OidcServer { callback(): (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void }
const { default: Provider } = await import('oidc-provider' as string) as { default: new (issuer: string, config: Record<string, unknown>) => OidcServer }

const CLIENT = { cid: 'gatehouse-audit', csecret: randomBytes(24).toString('base64url') }
const http = createServer()
await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
const ISSUER = `http://127.0.0.1:${(http.address() as { port: number }).port}`
t.teardown(() => new Promise<void>((resolve) => { http.closeAllConnections(); http.close(() => resolve()) }))

const { privateKey } = await generateKeyPair('RS256', { extractable: true })
const op = new Provider(ISSUER, {
  clients: [{ client_id: CLIENT.cid, client_secret: CLIENT.csecret, redirect_uris: [`${APP_URL}/auth/oidc/callback`], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
  pkce: { required: () => true },
  claims: { openid: ['sub'], profile: ['name'] },
  findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, name: `Name of ${id}` }) }),
  cookies: { keys: [randomBytes(32).toString('hex')] },
  jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] },
  features: { devInteractions: { enabled: true } }
})
http.on('request', op.callback())

const events: AuditEvent[] = []
const testApp = await startApp(async (app) => {
  await app.register(oidcProvider, { name: 'oidc', ...CLIENT, issuer: ISSUER })
}, { onEvent: (e) => { events.push(e) } })
t.teardown(testApp.close)

t.test('an OIDC login emits login.succeeded; nothing of the handshake is told', async (t) => {
  events.length = 0
  const nav = await signInAt(testApp.browser(), ISSUER, `${APP_URL}/auth/oidc/login?site=portal`, 'alice')
  t.equal(nav.res.status, 200, nav.body)
  t.same(events.map((e) => e.type), ['login.succeeded'])
  t.match(events[0], { provider: 'oidc', userId: userId('oidc', 'alice'), aud: 'portal', outcome: 'success', reason: 'session_issued' })
  const callback = new URL(nav.url)
  const text = JSON.stringify(events)
  for (const [what, value] of [['code', callback.searchParams.get('code')], ['state', callback.searchParams.get('state')], ['client secret', CLIENT.csecret]] as const) {
    t.ok(value !== null && value !== '' && !text.includes(value), `no ${what}`)
  }
  t.notOk(/eyJ/.test(text), 'no token')
})

t.test('a forged state emits login.failed state_mismatch', async (t) => {
  const browser = testApp.browser()
  const start = await browser.request(`${APP_URL}/auth/oidc/login`)
  const saved = browser.hosts.get('app.test')!
  browser.hosts.delete('app.test') // the browser cannot reach the app: navigation stops at the callback redirect
  let cb: URL
  try {
    const nav = await signInAt(browser, ISSUER, start.headers.get('location')!, 'bob')
    cb = new URL(nav.hops.at(-1)!.location!)
  } finally {
    browser.hosts.set('app.test', saved)
  }
  cb.searchParams.set('state', 'forged-state')
  events.length = 0
  const r = await browser.request(cb.href)
  t.equal(r.status, 403)
  t.same(events.map((e) => e.type), ['login.failed'])
  t.match(events[0], { provider: 'oidc', reason: 'state_mismatch', status: 403, userId: undefined })
  t.notOk(JSON.stringify(events).includes(cb.searchParams.get('code')!), 'no code')
})
