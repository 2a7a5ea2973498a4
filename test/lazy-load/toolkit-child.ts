/**
 * Run by lazy-load.test.ts in a fresh process: reports, step by step, which heavy dependencies of the
 * toolkit have been loaded yet. Prints one JSON object `{ step: [loaded package names] }`.
 */
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
// (helmet, loaded by secureHeaders the same way as @fastify/cors, is an ES module: it never shows in require.cache.)
const HEAVY = ['bcryptjs', 'argon2', '@fastify/static', '@fastify/compress', '@fastify/cors']
// ESM imports of a CommonJS package land in the same module cache, so a static import would show here too.
// Node's own zlib is no package: its loading shows in the list of loaded built-in modules.
const loaded = (): string[] => [
  ...HEAVY.filter((name) => Object.keys(require.cache).some((k) => k.includes(`/node_modules/${name}/`))),
  ...((process as unknown as { moduleLoadList: string[] }).moduleLoadList.includes('NativeModule zlib') ? ['node:zlib'] : [])
]
const steps: Record<string, string[]> = {}

const toolkit = await import('../../toolkit.js')
steps.imported = loaded()

const Fastify = (await import('fastify')).default
const app = Fastify()
app.get('/a', { onRequest: toolkit.withUserPasswd('admin', 'pw') }, async () => 'a')
app.get('/b', { onRequest: toolkit.withBcryptHash('admin', `$2b$04$${'a'.repeat(53)}`) }, async () => 'b')
await app.register(toolkit.pingPlugin)
await app.ready()
await app.close()
steps.hooksSetUp = loaded()

const body = Fastify()
await body.register(toolkit.sizeLimitPlugin, { limit: 100 })
await body.register(toolkit.blackWordsPlugin, { words: ['spam'] })
body.post('/', async () => 'ok')
await body.ready()
await body.inject({ method: 'POST', url: '/', headers: { 'content-type': 'text/plain' }, payload: 'zz' })
steps.bodyChecked = loaded()
// gzip of "zz", written out so that making it loads nothing
await body.inject({ method: 'POST', url: '/', headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, payload: Buffer.from('H4sIAAAAAAAAA6uqAgChG9kkAgAAAA==', 'base64') })
await body.close()
steps.compressedBodyChecked = loaded()

await toolkit.bcryptHash('pw', 4)
steps.bcryptHashed = loaded()

await toolkit.argon2Hash('pw', { memoryCost: 1024 })
steps.argon2Hashed = loaded()

const gz = Fastify()
await gz.register(toolkit.gzipPlugin)
await gz.ready()
await gz.close()
steps.gzipRegistered = loaded()

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-lazy-'))
try {
  const fs = Fastify()
  await fs.register(toolkit.fileServerPlugin, { root: dir })
  await fs.ready()
  await fs.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
steps.fileServerRegistered = loaded()

const web = Fastify()
await web.register(toolkit.corsPlugin, { origins: ['https://app.example.com'] })
await web.register(toolkit.secureHeadersPlugin)
await web.ready()
await web.close()
steps.corsAndHeadersRegistered = loaded()

process.stdout.write(JSON.stringify(steps))
