/**
 * Test helper for the provider's own tokens: a local stand-in of an OAuth2 provider that issues expiring access
 * tokens and rotating refresh tokens (a spent refresh token is refused, as providers that rotate do), counts
 * refreshes and records revocations; and an app signed in through it with `keepTokens`.
 */
import type { Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import formbody from '@fastify/formbody'
import { EventEmitter, once } from 'node:events'
import { authPlugin } from '../../auth.js'
import type { StateStore } from '../../lib/state-store.js'
import { getProviderToken, oauth2Provider, revokeProviderToken } from '../../providers/index.js'
import { client, listen, type Client } from './client.js'

export const KEY = 'c3'.repeat(32)
export const CID = 'acme-client'
export const CSECRET = 'acme-client-secret-0123456789'

/** The stand-in's state: what it issued, what it was asked, how it misbehaves next. */
export interface Acme {
  base: string
  app: FastifyInstance
  refreshes: number
  revoked: Array<{ token: string; hint: string }>
  refresh: 'ok' | 'invalid_grant' | 'error_object' | 'down' | 'wrong_types'
  live: Set<string>
  /** From now on, refresh requests wait at the stand-in until `release()` (a provider as slow as the test needs). */
  hold(): void
  /** Lets the refresh requests waiting now go on (each answers as `refresh` says then), and stops holding. */
  release(): void
  /** Resolves when the next refresh request reaches the stand-in. */
  refreshArrived(): Promise<void>
}

export async function startAcme (): Promise<Acme> {
  const app = Fastify()
  await app.register(formbody)
  const arrivals = new EventEmitter()
  let holding = false
  const held: Array<() => void> = []
  const acme: Acme = {
    base: '',
    app,
    refreshes: 0,
    revoked: [],
    refresh: 'ok',
    live: new Set(),
    hold: () => { holding = true },
    release: () => { holding = false; for (const go of held.splice(0)) go() },
    refreshArrived: async () => { await once(arrivals, 'refresh') }
  }
  let n = 0
  const clientOk = (auth: string | undefined): boolean => auth === `Basic ${Buffer.from(`${CID}:${CSECRET}`).toString('base64')}`
  const issue = (): Record<string, unknown> => {
    n++
    acme.live.add(`acme-rt-${n}`)
    return { access_token: `acme-at-${n}`, refresh_token: `acme-rt-${n}`, expires_in: 60, token_type: 'Bearer', scope: 'read' }
  }
  app.get<{ Querystring: Record<string, string> }>('/authorize', async (request, reply) => {
    const { redirect_uri: to, state } = request.query
    return await reply.redirect(`${to}?code=the-code&state=${encodeURIComponent(state!)}`, 302)
  })
  app.post<{ Body: Record<string, string> }>('/token', async (request, reply) => {
    if (!clientOk(request.headers.authorization)) return await reply.code(401).send({ error: 'invalid_client' })
    const body = request.body
    if (body.grant_type === 'authorization_code') return issue()
    acme.refreshes++
    arrivals.emit('refresh')
    if (holding) await new Promise<void>((resolve) => { held.push(resolve) })
    if (acme.refresh === 'down') return await reply.code(503).send('maintenance')
    if (acme.refresh === 'wrong_types') return { access_token: 12345, token_type: ['Bearer'], expires_in: 'soon' }
    if (acme.refresh === 'error_object') return { error: 'invalid_grant', error_description: 'refresh token expired' }
    if (acme.refresh === 'invalid_grant' || !acme.live.delete(body.refresh_token!)) return await reply.code(400).send({ error: 'invalid_grant' })
    return issue()
  })
  app.post<{ Body: Record<string, string> }>('/revoke', async (request, reply) => {
    if (!clientOk(request.headers.authorization)) return await reply.code(401).send({ error: 'invalid_client' })
    acme.revoked.push({ token: request.body.token!, hint: request.body.token_type_hint! })
    acme.live.delete(request.body.token!)
    return await reply.code(200).send()
  })
  app.get('/user', async (request, reply) => {
    if (!/^Bearer acme-at-\d+$/.test(request.headers.authorization ?? '')) return await reply.code(401).send({ error: 'invalid_token' })
    return { id: 'ann-1', name: 'Ann' }
  })
  acme.base = await app.listen({ port: 0, host: '127.0.0.1' })
  return acme
}

/** What an app of `startAcmeApp` logs and emits. */
export interface AcmeAppRecords { logs: string[]; events: unknown[] }

/**
 * An app with `acme` as a provider keeping its tokens in `stateStore` (an object or a Redis URL), with
 * `GET /acme-token` (getProviderToken) and `POST /acme-disconnect` (revokeProviderToken); closed at the end of `t`.
 */
export async function startAcmeApp (t: Test, acme: Acme, stateStore: StateStore | string): Promise<{ app: FastifyInstance; base: string } & AcmeAppRecords> {
  const logs: string[] = []
  const events: unknown[] = []
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, {
      secret: () => 'provider-tokens-secret-0123456789-abcdef',
      url: 'http://127.0.0.1',
      stateStore,
      logger: { logf: (format: string, ...args: unknown[]) => { logs.push([format, ...args].map(String).join(' ')) } },
      onEvent: (e) => { events.push(e) }
    })
    await app.register(oauth2Provider, {
      name: 'acme',
      cid: CID,
      csecret: CSECRET,
      endpoint: { authURL: `${acme.base}/authorize`, tokenURL: `${acme.base}/token` },
      infoURL: `${acme.base}/user`,
      mapUser: (data) => ({ id: data.id as string, name: data.name as string }),
      keepTokens: { key: KEY, revocationURL: `${acme.base}/revoke` }
    })
    app.get('/acme-token', { preHandler: app.auth.authenticate }, async (request) => await getProviderToken(request, 'acme'))
    app.post('/acme-disconnect', { preHandler: app.auth.authenticate }, async (request) => ({ revoked: await revokeProviderToken(request, 'acme') }))
  })
  t.teardown(() => app.close())
  return { app, base, logs, events }
}

/** Signs a new client of `base` in through the stand-in: its authorize endpoint and back to the callback. */
export async function signInWithAcme (base: string): Promise<Client> {
  const c = client(base)
  const start = await c.fetch('/auth/acme/login')
  const back = await fetch(start.headers.get('location')!, { redirect: 'manual' })
  const callback = new URL(back.headers.get('location')!)
  const done = await c.fetch(callback.pathname + callback.search)
  if (done.status !== 200) throw new Error(`login: ${done.status} ${await done.text()}`)
  return c
}

export const xsrf = (c: Client): Record<string, string> => ({ 'x-xsrf-token': c.jar.get('XSRF-TOKEN')! })

/** `GET /acme-token` as `c`: the status and the JSON answer. */
export async function acmeToken (c: Client): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await c.fetch('/acme-token', { headers: xsrf(c) })
  return { status: r.status, body: await r.json() as Record<string, unknown> }
}
