import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { freePort } from '../helpers/redis-server.js'

// The child runs with this process's TypeScript loader only (no coverage or mock hooks).
const loader = process.execArgv.filter((a) => a.includes('ts-loader'))

t.test('ioredis is loaded when a Redis store is opened, not before', async (t) => {
  const port = await freePort()
  const child = spawnSync(process.execPath, [...loader, fileURLToPath(new URL('./state-store-child.ts', import.meta.url)), String(port)], { encoding: 'utf8', timeout: 90_000 })
  t.equal(child.status, 0, child.stderr)
  t.same(JSON.parse(child.stdout), {
    imported: false,
    memoryOpened: false,
    appWithoutRedis: false,
    refusedOptions: false,
    redisOpened: true
  })
})
