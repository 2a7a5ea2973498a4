/**
 * Two instances sharing a real Redis: a refresh token reused on one ends the family, and the family's access
 * tokens are refused at once on the other (which had served them from its verified-session cache). The same on
 * a Redis Cluster and on Sentinel: test/e2e/redis/client-tokens.test.ts.
 */
import t from 'tap'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'
import { familyAcrossInstances } from '../../helpers/family-reuse.js'

t.test('reuse on instance A ends the family on instance B at once', { skip: redisMissingReason() }, async (t) => {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())
  await familyAcrossInstances(t, redis.url)
})
