/**
 * Run by lazy-load.test.ts in a fresh process: after each step, reports which of the SAML provider's modules
 * (providers/saml/) and its optional driver (@node-saml/node-saml, with xml-crypto) have been loaded. Prints one
 * JSON object `{ step: [loaded, …] }`. The root entry exports `samlProvider`; importing it, or running an app that
 * does not register it, loads neither (the install and load weight of an app without SAML is unchanged).
 */
import { register } from 'node:module'

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
  const urls = [...seen]
  const out: string[] = []
  if (urls.some((u) => u.includes('/providers/saml/'))) out.push('providers/saml')
  if (urls.some((u) => u.includes('/node_modules/@node-saml/'))) out.push('@node-saml/node-saml')
  return out
}

const steps: Record<string, string[]> = {}
const { samlProvider, directProvider } = await import('../../index.js')
await import('../../providers/index.js')
steps.imported = await loaded()

const Fastify = (await import('fastify')).default
const { authPlugin } = await import('../../auth.js')
const secret = (): string => 'lazy-load-secret-0123456789abcdef'
const passwordOnly = Fastify()
await passwordOnly.register(authPlugin, { secret, url: 'http://127.0.0.1' })
await passwordOnly.register(directProvider, { name: 'local', checker: () => false })
await passwordOnly.ready()
await passwordOnly.inject('/auth/local/login?user=a&passwd=b')
await passwordOnly.close()
steps.passwordOnly = await loaded()

const app = Fastify()
await app.register(authPlugin, { secret, url: 'http://127.0.0.1' })
await app.register(samlProvider, { idp: { metadataUrl: 'http://127.0.0.1:1/metadata' } })
await app.ready()
steps.samlRegistered = await loaded()
await app.close()

process.stdout.write(JSON.stringify(steps))
