/**
 * Two instances sharing a real Redis: a refresh token reused on one ends the family, and the family's access
 * tokens are refused at once on the other (which had served them from its verified-session cache). The same on
 * a Redis Cluster and on Sentinel: test/e2e/redis/client-tokens.test.ts.
 * The token endpoints' address lockout (rateLimit.grants) is shared by both instances too.
 */
import t from 'tap'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { familyAcrossInstances } from '../../helpers/family-reuse.js'
import { clientsApp } from '../../helpers/clients-app.js'

t.test('reuse on instance A ends the family on instance B at once', { skip: redisMissingReason() }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  await familyAcrossInstances(t, redis.url)
})

t.test('the token endpoints\' address lockout is shared: refusals on A lock the address out of B', { skip: redisMissingReason() }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const options = { stateStore: redis.url, rateLimit: { grants: { perIp: 3 } } }
  const a = await clientsApp(options)
  const b = await clientsApp(options)
  t.teardown(async () => { await a.close(); await b.close() })
  const grant = async (on: typeof a, remoteAddress: string, refreshToken: string) => await on.app.inject({
    method: 'POST', url: '/auth/token', remoteAddress, headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'mobile', refresh_token: refreshToken }).toString()
  })
  for (let i = 0; i < 3; i++) t.equal((await grant(a, '10.9.0.1', `guess-${i}`)).statusCode, 400, `guess ${i + 1} on A`)
  const pair = await b.pair('ann')
  const onB = await grant(b, '10.9.0.1', pair.refresh_token)
  t.equal(onB.statusCode, 429, 'B refuses the address A locked out')
  t.equal(onB.json().error, 'too_many_requests')
  t.equal((await grant(b, '10.9.0.2', pair.refresh_token)).statusCode, 200, 'another address on B is not affected; the 429 consumed nothing')
})
