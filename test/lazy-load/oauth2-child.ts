/**
 * Run by lazy-load.test.ts in a fresh process: after each step, reports which of the heavy dependencies of the
 * OAuth2 family have been loaded: jose (ID tokens, Apple's client secret), sharp (which the dev server's pictures
 * must not need), and the dev server itself. Prints one JSON object `{ step: [loaded, …] }`.
 *
 * ES modules are seen through a module resolution hook (jose, the dev server); sharp, a CommonJS package
 * loaded through `require`, through the require cache.
 */
import { register, createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const seen = new Set<string>()
const { port1, port2 } = new MessageChannel()
let flushed: (() => void) | undefined
port1.on('message', (m: { url?: string; flushed?: true }) => {
  if (m.url !== undefined) seen.add(m.url)
  if (m.flushed === true) flushed?.()
})
port1.unref()
register(`data:text/javascript,${encodeURIComponent(`
let port
export function initialize (data) {
  port = data.port
  port.on('message', () => { port.postMessage({ flushed: true }) })
  port.unref()
}
export async function resolve (specifier, context, next) {
  const r = await next(specifier, context)
  port.postMessage({ url: r.url })
  return r
}`)}`, { data: { port: port2 }, transferList: [port2] })

/**
 * What is loaded now. The hook posts each resolution before the import it serves goes on; its answer to a flush
 * comes after them on the same port: so every import that already finished is in `seen` once the answer is here.
 */
async function loaded (): Promise<string[]> {
  await new Promise<void>((resolve) => { flushed = resolve; port1.ref(); port1.postMessage('flush') })
  port1.unref()
  const urls = [...seen]
  const out: string[] = []
  if (urls.some((u) => u.includes('/node_modules/jose/'))) out.push('jose')
  if (Object.keys(require.cache).some((k) => k.includes('/node_modules/sharp/'))) out.push('sharp')
  if (urls.some((u) => u.includes('/servers/dev-server.'))) out.push('dev-server')
  return out
}

const steps: Record<string, string[]> = {}
const { oauth2Provider, devProvider } = await import('../../providers/index.js')
await import('../../index.js')
steps.imported = await loaded()

const Fastify = (await import('fastify')).default
const { authPlugin } = await import('../../auth.js')
const secret = (): string => 'lazy-load-secret-0123456789abcdef'
const app = Fastify()
await app.register(authPlugin, { secret, url: 'http://127.0.0.1' })
await app.register(oauth2Provider, { name: 'github', cid: 'a', csecret: 'b' })
let serverUrl = ''
await app.register(devProvider, { port: 0, onServer: (s) => { serverUrl = s.url } })
steps.registered = await loaded()

await app.ready()
steps.ready = await loaded()

// A user's picture on the dev server, drawn by the package's own PNG encoder.
const picture = await fetch(`${serverUrl}/picture/${'0'.repeat(40)}.png`)
await picture.arrayBuffer()
steps.pictureServed = await loaded()
await app.close()

// An OpenID Connect provider verifies ID tokens with jose, loaded when the provider is set up.
const oidcApp = Fastify()
await oidcApp.register(authPlugin, { secret, url: 'http://127.0.0.1' })
await oidcApp.register(oauth2Provider, { name: 'google', cid: 'a', csecret: 'b', jwksURL: 'http://127.0.0.1:1/jwks', issuer: 'http://127.0.0.1:1' })
await oidcApp.ready()
steps.oidcReady = await loaded()
await oidcApp.close()

process.stdout.write(JSON.stringify({ ...steps, pictureStatus: picture.status }))
