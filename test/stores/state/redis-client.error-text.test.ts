/**
 * A 503 names the kind of peer, never its reply. Redis's own error text (an address in a connection error, a key
 * slot in CROSSSLOT, a memory limit in OOM) used to reach the answer's `details` as `redis: <text>`; now the
 * client reads only that Redis did not answer or refused, and the text goes to the log, once.
 * Real redis-server: refused commands (OOM under `maxmemory`), then stopped.
 */
import t from 'tap'
import { authPlugin } from '../../../auth.js'
import { verifyProvider } from '../../../providers/index.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { Redis } from 'ioredis'
import { client, listen } from '../../helpers/client.js'
import { redisForTests } from '../../helpers/redis-server.js'

const redis = await redisForTests(t, 'Redis error text')
if (redis !== undefined) {
  const lines: string[] = []
  const mails: string[] = []
  const { app, base } = await listen(async (app) => {
    await app.register(authPlugin, { secret: () => 'error-text-test-secret-0123456789', url: 'http://127.0.0.1', logger: funcLogger((l) => { lines.push(l) }) })
    // The provider's one-time state in Redis (opened from its address, so its errors reach the package's log).
    await app.register(verifyProvider, { name: 'email', template: '{{.Token}}', sender: (_a: string, text: string) => { mails.push(text) }, stateStore: redis.url })
  })
  t.teardown(() => app.close())
  const admin = new Redis(redis.url)
  t.teardown(() => { admin.disconnect() })

  /** Redis's words that must never reach a client. */
  const leaks = /redis:|OOM|maxmemory|max retries|127\.0\.0\.1|ECONNREFUSED|CROSSSLOT/i

  t.test('a command Redis refuses: 503 without its reply, the reply logged once', async (t) => {
    const c = client(base)
    t.equal((await c.fetch('/auth/email/login?user=ann&address=ann@example.com')).status, 200)
    const token = mails.at(-1)!
    await admin.config('SET', 'maxmemory', '1')
    try {
      for (let i = 0; i < 2; i++) {
        const res = await c.fetch(`/auth/email/login?token=${token}`)
        t.equal(res.status, 503)
        const body = await res.json() as { error: string; details: string; code: string }
        t.same(body, { error: 'state store unavailable', details: 'Redis refused the command', code: 'GATEHOUSE_STATE_STORE' })
        t.notMatch(JSON.stringify(body), leaks)
      }
    } finally {
      await admin.config('SET', 'maxmemory', '0')
    }
    t.equal(lines.filter((l) => l.startsWith('[WARN] state store: OOM command not allowed')).length, 1, 'Redis\'s reply is reported to the log, once')
  })

  t.test('Redis down: 503 without the connection error', async (t) => {
    const c = client(base)
    t.equal((await c.fetch('/auth/email/login?user=bob&address=bob@example.com')).status, 200)
    const token = mails.at(-1)!
    await redis.stop()
    try {
      const res = await c.fetch(`/auth/email/login?token=${token}`)
      t.equal(res.status, 503)
      const body = await res.json() as Record<string, unknown>
      t.same(body, { error: 'state store unavailable', details: 'Redis did not answer', code: 'GATEHOUSE_STATE_STORE' })
      t.notMatch(JSON.stringify(body), leaks)
    } finally {
      await redis.start()
    }
  })
}
