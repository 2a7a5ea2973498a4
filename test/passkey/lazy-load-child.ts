/**
 * Run by lazy-load.test.ts in a fresh process: after each step, reports which of @simplewebauthn/server (an ES
 * module, seen through a module resolution hook) and lmdb (CommonJS, seen in the require cache) are loaded.
 * Prints one JSON object `{ step: [loaded, …] }`.
 */
import { register, createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const seen = new Set<string>()
const { port1, port2 } = new MessageChannel()
port1.on('message', (url: string) => { seen.add(url) })
port1.unref()
register(`data:text/javascript,${encodeURIComponent(`
let port
export function initialize (data) { port = data.port }
export async function resolve (specifier, context, next) {
  const r = await next(specifier, context)
  port.postMessage(r.url)
  return r
}`)}`, { data: { port: port2 }, transferList: [port2] })

/** What is loaded now; waits for the hook's messages about the imports that already finished. */
async function loaded (): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, 50))
  const out: string[] = []
  if ([...seen].some((u) => u.includes('/node_modules/@simplewebauthn/server/'))) out.push('simplewebauthn')
  if (Object.keys(require.cache).some((k) => k.includes('/node_modules/lmdb/'))) out.push('lmdb')
  return out
}

const steps: Record<string, string[]> = {}
const { authPlugin, passkeyProvider } = await import('../../index.js')
await import('../../stores/index.js')
steps.imported = await loaded()

const Fastify = (await import('fastify')).default
const secret = (): string => 'lazy-load-secret-0123456789abcdef'
const app = Fastify()
await app.register(authPlugin, { secret, url: 'http://localhost:8080' })
await app.register(passkeyProvider, {})
await app.ready()
steps.memoryStore = await loaded()
await app.close()

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-passkey-lazy-'))
const bolt = Fastify()
await bolt.register(authPlugin, { secret, url: 'http://localhost:8080' })
await bolt.register(passkeyProvider, { store: `bolt://${join(dir, 'passkeys.db')}` })
await bolt.ready()
steps.boltStore = await loaded()
await bolt.close()
rmSync(dir, { recursive: true, force: true })

process.stdout.write(JSON.stringify(steps))
