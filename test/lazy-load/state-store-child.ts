/**
 * Run by lazy-load.test.ts in a fresh process: reports, step by step, whether ioredis has been loaded yet.
 * Prints one JSON object `{ step: loaded }`; the first argument is a port where no Redis listens.
 */
import { loaded as loadedPackage } from './state-store-probe.js'

const loaded = (): boolean => loadedPackage('ioredis')
const steps: Record<string, boolean> = {}

const stores = await import('../../stores/index.js')
await import('../../stores/state/index.js')
steps.imported = loaded()

const { store } = await stores.openStateStore(undefined, 'stateStore')
await store.close()
steps.memoryOpened = loaded()

const Fastify = (await import('fastify')).default
const { authPlugin } = await import('../../auth.js')
const app = Fastify()
await app.register(authPlugin, { secret: () => 'lazy-secret-0123456789-0123456789abcdef', url: 'http://127.0.0.1' })
await app.ready()
await app.close()
steps.appWithoutRedis = loaded()

await stores.openStateStore('mysql://x', 'stateStore').catch(() => {})
try { new stores.RedisStateStore('redis://127.0.0.1:1', { keyPrefix: 5 as never }) } catch {}
steps.refusedOptions = loaded()

const redis = await stores.openStateStore(`redis://127.0.0.1:${process.argv[2]}`, 'stateStore', () => {})
steps.redisOpened = loaded()
await redis.store.close()

process.stdout.write(JSON.stringify(steps))
