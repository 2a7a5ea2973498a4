/**
 * DPoP (RFC 9449) across two instances sharing a real Redis: a proof's `jti` spent on one is refused on the other
 * (at a protected route and at the token endpoint), and a server nonce one instance told is taken by the other.
 */
import t from 'tap'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { clientsApp, type ClientsApp } from '../../helpers/clients-app.js'
import { proof, proofKey } from '../../helpers/dpop.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

t.test('two instances on one Redis: a replayed jti is refused on the other; nonces are shared', { skip: redisMissingReason() }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  // Both answer for the same public url (behind one address), as instances behind a load balancer do.
  const a = await clientsApp({ stateStore: redis.url })
  const b = await clientsApp({ stateStore: redis.url, url: a.base })
  t.teardown(async () => { await a.close(); await b.close() })
  const key = await proofKey('ES256')
  const r = await a.app.inject({ method: 'POST', url: '/app/pair', payload: { name: 'ann' }, headers: { dpop: await proof(key, { htm: 'POST', htu: `${a.base}/app/pair` }) } })
  const pair = r.json()
  t.equal(pair.token_type, 'DPoP')

  const call = async (on: ClientsApp, dpop: string) => await on.app.inject({ url: '/private', headers: { authorization: `DPoP ${pair.access_token as string}`, dpop } })
  const once = await proof(key, { htm: 'GET', htu: `${a.base}/private`, token: pair.access_token })
  t.equal((await call(a, once)).statusCode, 200, 'A takes the proof')
  const replay = await call(b, once)
  t.equal(replay.statusCode, 401, 'B refuses it: its jti was spent on A')
  t.match(replay.headers['www-authenticate'], /^DPoP error="invalid_dpop_proof", error_description="the DPoP proof was used already \(jti\)"/)
  t.ok(b.events.some((e) => e.type === 'session.refused' && e.reason === 'dpop_replay'), 'and audits it')
  t.equal((await call(b, await proof(key, { htm: 'GET', htu: `${a.base}/private`, token: pair.access_token }))).statusCode, 200, 'a fresh proof is taken on B')

  const grant = async (on: ClientsApp, dpop: string) => await on.app.inject({
    method: 'POST', url: '/auth/token', headers: { ...FORM, dpop }, payload: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'mobile', refresh_token: pair.refresh_token }).toString()
  })
  const told = await grant(a, await proof(key, { htm: 'POST', htu: `${a.base}/auth/token` }))
  t.equal(told.json().error, 'use_dpop_nonce')
  const nonce = told.headers['dpop-nonce'] as string
  const onB = await proof(key, { htm: 'POST', htu: `${a.base}/auth/token`, nonce })
  const refreshed = await grant(b, onB)
  t.equal(refreshed.statusCode, 200, 'B takes the nonce A told')
  t.equal(refreshed.json().token_type, 'DPoP')
  const again = await grant(a, onB)
  t.equal(again.statusCode, 400)
  t.match(again.json(), { error: 'invalid_dpop_proof', error_description: /used already/ }, 'the token request\'s proof replayed on A')
})
