/**
 * The servers speak standard OAuth2 to a client not written here: @fastify/oauth2 (simple-oauth2 inside)
 * runs a full login with state and PKCE S256 against the dev server (login page) and the local server
 * (auto-login), with HTTP Basic and with body client authentication.
 */
import t from 'tap'
import oauthPlugin, { type OAuth2Namespace } from '@fastify/oauth2'
import type { FastifyInstance } from 'fastify'
import { startDevServer, startLocalOAuth2Server, type RunningOAuth2Server } from '../../servers/index.js'
import { client, listen } from '../helpers/client.js'

declare module 'fastify' {
  interface FastifyInstance { localOAuth2: OAuth2Namespace }
}

/** An app using @fastify/oauth2 against `server`; its callback answers the userinfo JSON. */
async function clientApp (server: RunningOAuth2Server, authorizationMethod: 'header' | 'body'): Promise<{ app: FastifyInstance; base: string }> {
  const p = server.providerOptions
  const auth = new URL(p.endpoint.authURL)
  const tok = new URL(p.endpoint.tokenURL)
  const started = await listen(async (app) => {
    await app.register(oauthPlugin, {
      name: 'localOAuth2',
      credentials: {
        client: { id: p.cid, secret: p.csecret },
        auth: { authorizeHost: auth.origin, authorizePath: auth.pathname, tokenHost: tok.origin, tokenPath: tok.pathname },
        options: { authorizationMethod }
      },
      scope: p.scopes,
      startRedirectPath: '/login',
      // Stable per request, as @fastify/oauth2 calls it at authorize and at exchange.
      callbackUri: (req) => `http://${req.host}/callback`,
      pkce: 'S256'
    })
    app.get('/callback', async (request, reply) => {
      const { token } = await app.localOAuth2.getAccessTokenFromAuthorizationCodeFlow(request, reply)
      const info = await fetch(p.infoURL, { headers: { authorization: `Bearer ${String(token.access_token)}` } })
      return { status: info.status, user: p.mapUser(await info.json()) }
    })
  })
  // The client's one callback, registered as a client registers it in a provider's console.
  p.onRedirectUri(`${started.base}/callback`)
  return started
}

t.test('@fastify/oauth2 signs in through the dev server login page (HTTP Basic, PKCE)', async (t) => {
  const dev = await startDevServer({ port: 0, emailFn: (n) => `${n}@dev.test` })
  t.teardown(dev.close)
  const { app, base } = await clientApp(dev, 'header')
  t.teardown(() => app.close())
  const browserAtApp = client(base)
  const browserAtDev = client(dev.url)

  const start = await browserAtApp.fetch('/login')
  t.equal(start.status, 302)
  const authorize = new URL(start.headers.get('location')!)
  t.equal(authorize.origin, dev.url)
  t.equal(authorize.searchParams.get('code_challenge_method'), 'S256')
  const page = await browserAtDev.fetch(authorize.pathname + authorize.search)
  t.equal(page.status, 200)
  const request = /name="request" value="([^"]+)"/.exec(await page.text())![1]!
  const submit = await browserAtDev.fetch('/login/oauth/authorize', { method: 'POST', form: { request, user: 'erin' } })
  t.equal(submit.status, 303)
  const callback = new URL(submit.headers.get('location')!)
  t.equal(callback.origin, base)
  const done = await browserAtApp.fetch(callback.pathname + callback.search)
  t.equal(done.status, 200)
  t.match(await done.json(), { status: 200, user: { id: 'erin', name: 'erin', email: 'erin@dev.test', picture: `${dev.url}/picture/` } })
})

t.test('@fastify/oauth2 signs in through the local server without a page (body client auth, PKCE)', async (t) => {
  const local = await startLocalOAuth2Server({ url: 'http://127.0.0.1:0', autoLoginUser: 'frank' })
  t.teardown(local.close)
  const { app, base } = await clientApp(local, 'body')
  t.teardown(() => app.close())
  const browser = client(base)
  const start = await browser.fetch('/login')
  const back = await fetch(start.headers.get('location')!, { redirect: 'manual' })
  t.equal(back.status, 302)
  const callback = new URL(back.headers.get('location')!)
  const done = await browser.fetch(callback.pathname + callback.search)
  t.equal(done.status, 200)
  t.match(await done.json(), { status: 200, user: { id: 'frank', name: 'frank' } })
})
