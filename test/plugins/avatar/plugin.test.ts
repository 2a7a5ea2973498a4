/**
 * Several instances share a Redis state store but keep avatars in memory: one warning at startup says so
 * (issue 23 item 13); a shared avatar store, or no shared state store, warns nothing.
 */
import t from 'tap'
import Fastify from 'fastify'
import { authPlugin } from '../../../auth.js'
import { funcLogger } from '../../../lib/logging/logger.js'
import { RedisServer, redisMissingReason } from '../../helpers/redis-server.js'

const secret = (): string => 'avatar-plugin-secret-0123456789-0123456789'
const WARNING = /^\[WARN\] avatar: the state store is shared between instances but avatars are kept in memory.*set avatar\.store to a shared store/

async function startupLines (opts: Record<string, unknown>): Promise<string[]> {
  const lines: string[] = []
  const app = Fastify()
  await app.register(authPlugin, { secret, url: 'http://127.0.0.1', logger: funcLogger((line) => lines.push(line)), ...opts })
  await app.ready()
  await app.close()
  return lines
}

const missing = redisMissingReason()
if (missing !== undefined) {
  t.comment(`skipped: ${missing}`)
} else {
  const redis = new RedisServer()
  await redis.start()
  t.teardown(() => redis.stop())

  t.test('Redis state store with in-memory avatars: one warning line', async (t) => {
    const lines = await startupLines({ stateStore: redis.url })
    t.equal(lines.filter((l) => WARNING.test(l)).length, 1, lines.join('\n'))
  })

  t.test('Redis state store with a shared avatar store: no warning', async (t) => {
    const lines = await startupLines({ stateStore: redis.url, avatar: { store: t.testdir({}) } })
    t.notOk(lines.some((l) => WARNING.test(l)))
  })
}

t.test('in-memory state store (one instance): no warning', async (t) => {
  t.notOk((await startupLines({})).some((l) => WARNING.test(l)))
})

t.test('avatar: false: no avatar plugin, no warning', async (t) => {
  t.notOk((await startupLines({ avatar: false })).some((l) => WARNING.test(l)))
})
