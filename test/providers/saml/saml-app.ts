/**
 * The SAML provider's test app (over `inject`): the root plugin and `samlProvider` with one IdP whose key the test
 * holds, the audit events it emitted, and the login → ACS round trip of a client.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { authPlugin, type AuthOptions } from '../../../auth.js'
import { samlProvider } from '../../../index.js'
import type { SamlProviderOptions } from '../../../providers/index.js'
import type { AuditEvent } from '../../../lib/audit/events.js'
import { injectApp, type InjectedApp } from '../../helpers/app.js'
import type { Client } from '../../helpers/client.js'
import { authnRequestOf, b64, IDP_ENTITY, IDP_SLO, IDP_SSO, keyPair, type KeyPair, type ResponseFields } from '../../helpers/saml-idp.js'

export const SECRET = 'saml-tests-secret-0123456789abcdef-0123456'
let keys: { idp: KeyPair; other: KeyPair; sp: KeyPair } | undefined
/** The test IdP's keys, another IdP's (an attacker's), and the SP's: made once per process. */
export function samlKeys (): { idp: KeyPair; other: KeyPair; sp: KeyPair } {
  keys ??= { idp: keyPair('idp.example.test'), other: keyPair('attacker.example.test'), sp: keyPair('sp.example.test') }
  return keys
}

export interface SamlApp extends InjectedApp {
  events: AuditEvent[]
  acs: string
  entityId: string
  /** Starts a login with `query`; answers the AuthnRequest's ID and the fields of a valid response to it. */
  start (c: Client, query?: string): Promise<{ rid: string; fields: ResponseFields; location: string }>
  /** Posts `xml` to the ACS. */
  post (c: Client, xml: string): Promise<Response>
}

export async function samlApp (saml: Partial<SamlProviderOptions> = {}, root: Partial<AuthOptions> = {}, setup?: (app: FastifyInstance) => Promise<void>): Promise<SamlApp> {
  const events: AuditEvent[] = []
  const url = root.url ?? 'http://127.0.0.1'
  const injected = await injectApp(async (app) => {
    await app.register(authPlugin, {
      secret: () => SECRET,
      url,
      login: { rateLimit: { login: { max: 10_000 }, failures: { perAccount: 10_000, perIp: 10_000 } } },
      onEvent: (e) => { events.push(e) },
      ...root
    } as AuthOptions)
    await app.register(samlProvider, { idp: { entityId: IDP_ENTITY, ssoUrl: IDP_SSO, sloUrl: IDP_SLO, certs: samlKeys().idp.cert }, ...saml } as SamlProviderOptions)
    await setup?.(app)
  })
  const name = saml.name ?? 'saml'
  const acs = `${url}/auth/${name}/acs`
  const entityId = saml.entityId ?? `${url}/auth/${name}/metadata`
  return {
    ...injected,
    events,
    acs,
    entityId,
    async start (c, query = '') {
      const r = await c.fetch(`/auth/${name}/login${query}`)
      if (r.status !== 302) throw new Error(`login answered ${r.status}: ${await r.text()}`)
      const location = r.headers.get('location')!
      const { id } = authnRequestOf(location)
      return { rid: id, location, fields: { acs, audience: entityId, inResponseTo: id } }
    },
    async post (c, xml) {
      return await c.fetch(`/auth/${name}/acs`, { method: 'POST', form: { SAMLResponse: b64(xml) } })
    }
  }
}

/** The last `login.failed` event's reason. */
export function lastFailure (events: AuditEvent[]): string | undefined {
  return events.filter((e) => e.type === 'login.failed').at(-1)?.reason
}

/** Registers `samlProvider` with `opts` after the auth core and readies the app: the registration error, or undefined. */
export async function registration (opts: Record<string, unknown>): Promise<unknown> {
  const app = Fastify()
  try {
    await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1' })
    await app.register(samlProvider, opts as unknown as SamlProviderOptions)
    await app.ready()
    return undefined
  } catch (err) {
    return err
  } finally {
    await app.close()
  }
}
