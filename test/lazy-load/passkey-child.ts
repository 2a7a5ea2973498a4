/**
 * Run by lazy-load.test.ts in a fresh process: after each step, reports which of @simplewebauthn/server and lmdb
 * are loaded. Prints one JSON object `{ step: [loaded, …] }`.
 */
import { loaded as loadedPackage } from './state-store-probe.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const loaded = (): string[] => [['simplewebauthn', '@simplewebauthn/server'], ['lmdb', 'lmdb']]
  .filter(([, pkg]) => loadedPackage(pkg!)).map(([label]) => label!)

const steps: Record<string, string[]> = {}
const { authPlugin, passkeyProvider } = await import('../../index.js')
await import('../../stores/index.js')
steps.imported = loaded()

const Fastify = (await import('fastify')).default
const secret = (): string => 'lazy-load-secret-0123456789abcdef'
const app = Fastify()
await app.register(authPlugin, { secret, url: 'http://localhost:8080' })
await app.register(passkeyProvider, {})
await app.ready()
steps.memoryStore = loaded()
await app.close()

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-passkey-lazy-'))
const bolt = Fastify()
await bolt.register(authPlugin, { secret, url: 'http://localhost:8080' })
await bolt.register(passkeyProvider, { store: `bolt://${join(dir, 'passkeys.db')}` })
await bolt.ready()
steps.boltStore = loaded()
await bolt.close()
rmSync(dir, { recursive: true, force: true })

process.stdout.write(JSON.stringify(steps))
