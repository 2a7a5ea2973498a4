/**
 * Two instances sharing a real Redis: a refresh token reused on one ends the family, and the family's access
 * tokens are refused at once on the other (which had served them from its verified-session cache). The same on
 * a Redis Cluster and on Sentinel: test/e2e/redis/client-tokens.test.ts.
 * The token endpoints' address lockout (rateLimit.grants) is shared by both instances too.
 */
import t from 'tap'
import { Redis } from 'ioredis'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { familyAcrossInstances } from '../../helpers/family-reuse.js'
import { clientsApp } from '../../helpers/clients-app.js'

t.test('reuse on instance A ends the family on instance B at once', { skip: redisMissingReason() }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  await familyAcrossInstances(t, redis.url)
})

t.test('two instances racing with one refresh token: one pair (one exchange in Redis), the other a reuse that ends the family', { skip: redisMissingReason() }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const a = await clientsApp({ stateStore: redis.url })
  const b = await clientsApp({ stateStore: redis.url })
  t.teardown(async () => { await a.close(); await b.close() })
  for (let round = 0; round < 5; round++) {
    const pair = await a.pair(`racer${round}`)
    const grant = async (on: typeof a) => await on.app.inject({
      method: 'POST', url: '/auth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'mobile', refresh_token: pair.refresh_token }).toString()
    })
    const [onA, onB] = await Promise.all([grant(a), grant(b)])
    t.same([onA.statusCode, onB.statusCode].sort(), [200, 400], `round ${round}: one pair, one refusal`)
    const won = (onA.statusCode === 200 ? onA : onB).json<{ access_token: string; refresh_token: string }>()
    t.equal((onA.statusCode === 400 ? onA : onB).json().error, 'invalid_grant')
    const r = await b.app.inject({ url: '/private', headers: { authorization: `Bearer ${won.access_token}` } })
    t.equal(r.statusCode, 401, `round ${round}: the family ended`)
  }
})

t.test('a refresh grant on Redis is eight commands: the lock, the record with its session mark, the user mark and epoch, one exchange', { skip: redisMissingReason() }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  const a = await clientsApp({ stateStore: redis.url })
  t.teardown(async () => { await a.close() })
  const pair = await a.pair('counted')
  const admin = new Redis(redis.port, '127.0.0.1')
  const monitor = await admin.monitor()
  t.teardown(() => { monitor.disconnect(); admin.disconnect() })
  const seen: string[] = []
  monitor.on('monitor', (_time: string, args: string[], source: string) => { seen.push(`${source.includes('lua') ? 'script ' : ''}${args[0]!.toLowerCase()}`) })
  const r = await a.app.inject({
    method: 'POST', url: '/auth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'mobile', refresh_token: pair.refresh_token }).toString()
  })
  t.equal(r.statusCode, 200)
  // A PING after the grant: once MONITOR shows it, it has shown every command of the grant.
  await admin.ping()
  for (let i = 0; i < 100 && !seen.includes('ping'); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  const grant = seen.slice(0, seen.indexOf('ping'))
  t.same([...grant].sort(), ['eval', 'get', 'get', 'get', 'mget', 'script del', 'script set', 'script set'], grant.join(', '))
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
