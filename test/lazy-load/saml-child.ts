/**
 * Run by lazy-load.test.ts in a fresh process: after each step, reports which of the SAML provider's modules
 * (providers/saml/) and its optional driver (@node-saml/node-saml) have been loaded. Prints one JSON object
 * `{ step: [loaded, …] }`. The root entry exports `samlProvider`; importing it, or running an app that does not
 * register it, loads neither (the load weight of an app without SAML is unchanged).
 */
import { loaded as loadedPackage, loadedFile } from './state-store-probe.js'

function loaded (): string[] {
  const out: string[] = []
  if (loadedFile('/providers/saml/')) out.push('providers/saml')
  if (loadedPackage('@node-saml/node-saml')) out.push('@node-saml/node-saml')
  return out
}

const steps: Record<string, string[]> = {}
const { samlProvider, directProvider } = await import('../../index.js')
await import('../../providers/index.js')
steps.imported = loaded()

const Fastify = (await import('fastify')).default
const { authPlugin } = await import('../../auth.js')
const secret = (): string => 'lazy-load-secret-0123456789abcdef'
const passwordOnly = Fastify()
await passwordOnly.register(authPlugin, { secret, url: 'http://127.0.0.1' })
await passwordOnly.register(directProvider, { name: 'local', checker: () => false })
await passwordOnly.ready()
await passwordOnly.inject('/auth/local/login?user=a&passwd=b')
await passwordOnly.close()
steps.passwordOnly = loaded()

const app = Fastify()
await app.register(authPlugin, { secret, url: 'http://127.0.0.1' })
await app.register(samlProvider, { idp: { metadataUrl: 'http://127.0.0.1:1/metadata' } })
await app.ready()
steps.samlRegistered = loaded()
await app.close()

process.stdout.write(JSON.stringify(steps))
