/**
 * Two instances sharing a real Redis: a refresh token reused on one ends the family, and the family's access
 * tokens are refused at once on the other (which had served them from its verified-session cache).
 */
import t from 'tap'
import * as oidc from 'openid-client'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { clientsApp } from '../../helpers/clients-app.js'

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

t.test('reuse on instance A ends the family on instance B at once', { skip: redisMissingReason() }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const a = await clientsApp({ stateStore: redis.url })
  const b = await clientsApp({ stateStore: redis.url })
  t.teardown(async () => { await a.close(); await b.close() })
  const onA = await a.discover()
  const onB = await b.discover()
  const first = await a.pair('ann')
  const second = await oidc.refreshTokenGrant(onB, first.refresh_token)
  t.equal((await b.app.inject({ url: '/private', headers: bearer(second.access_token) })).statusCode, 200, 'B serves the refreshed token (and caches it)')
  t.equal((await a.app.inject({ url: '/private', headers: bearer(second.access_token) })).statusCode, 200, 'and so does A')

  const err = await oidc.refreshTokenGrant(onA, first.refresh_token).then(() => undefined, (e: unknown) => e)
  t.equal((err as oidc.ResponseBodyError).error, 'invalid_grant', 'the rotated token presented to A is refused')
  t.ok(a.events.some((e) => e.type === 'token.reuse_detected'))
  for (const [name, app] of [['A', a], ['B', b]] as const) {
    const r = await app.app.inject({ url: '/private', headers: bearer(second.access_token) })
    t.equal(r.statusCode, 401, `${name} refuses the family's access token at once`)
    t.equal(r.json().code, 'GATEHOUSE_SESSION_REVOKED')
  }
  const again = await oidc.refreshTokenGrant(onB, second.refresh_token!).then(() => undefined, (e: unknown) => e)
  t.equal((again as oidc.ResponseBodyError).error, 'invalid_grant', 'the current token is dead on B too')
})
