/**
 * Parallel guesses on two instances sharing one real Redis get no more tries than a sequence. Before, attempts
 * counted past the threshold found no lock yet (the first five were still running) and raced for a "turn" of
 * which one won: six checks where five are promised. Now the count alone decides.
 */
import t from 'tap'
import { authPlugin } from '../../../auth.js'
import { client, listen } from '../../helpers/client.js'
import { redisForTests } from '../../helpers/redis-server.js'

const redis = await redisForTests(t, 'lockout on Redis')
if (redis !== undefined) {
  const checks: string[] = []
  const instances = await Promise.all([0, 1].map(async () => await listen(async (app) => {
    await app.register(authPlugin, {
      secret: () => 'lockout-redis-secret-0123456789abcdef',
      url: 'http://127.0.0.1',
      stateStore: redis.url,
      rateLimit: { login: { max: 0 }, failures: { perIp: 0 } }, // the account's count alone
      providers: [{
        kind: 'direct',
        name: 'local',
        // A slow checker (as a password hash is): every parallel attempt is counted before the first one fails.
        // What is asserted holds at any speed (a loaded machine only changes how many attempts overlap).
        checker: async (u: string) => { checks.push(u); await new Promise((resolve) => setTimeout(resolve, 20)); return false }
      }]
    })
  })))
  t.teardown(async () => { for (const i of instances) await i.app.close() })

  t.test('50 parallel wrong passwords on two instances: the checker runs at most 5 times per account', async (t) => {
    for (let round = 0; round < 5; round++) {
      const user = `victim${round}`
      const statuses = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
        const r = await client(instances[i % 2]!.base).fetch('/auth/local/login', { method: 'POST', json: { user, passwd: `guess-${i}` } })
        return r.status
      }))
      const ran = checks.filter((u) => u === user).length
      t.ok(ran >= 1 && ran <= 5, `${user}: the checker ran ${ran} times`)
      t.equal(statuses.filter((s) => s === 403).length, ran, `each check that ran was a wrong password, 403 (${statuses.join(' ')})`)
      t.equal(statuses.filter((s) => s === 429).length, 50 - ran, 'every other attempt was refused 429')
    }
  })
}
