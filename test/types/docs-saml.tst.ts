/**
 * The examples of docs/providers/saml.md outside its Options section, compiled (lines as written there;
 * test/docs/readme-examples.test.ts checks they stay the same).
 */
import Fastify from 'fastify'
import authPlugin, { samlProvider } from '../../index.js'
import type { SamlProviderOptions } from '../../providers/index.js'

declare const companies: { bySlug (slug: string): Promise<{ samlMetadataUrl?: string } | undefined> }
declare const secret: () => string
declare const url: string

const app = Fastify()
await app.register(authPlugin, { secret: () => process.env.AUTH_SECRET!, url: 'https://app.example.com' })
await app.register(samlProvider, { name: 'sso', idp: { metadataUrl: 'https://idp.example.com/metadata.xml' } })

await app.register(samlProvider, {
  name: 'sso',
  idp: async (tenant) => {
    const company = await companies.bySlug(tenant)
    return company?.samlMetadataUrl === undefined ? undefined : { metadataUrl: company.samlMetadataUrl }
  },
  tenant: (request) => /@([a-z0-9.-]+)$/i.exec(String((request.body as { email?: string } | undefined)?.email ?? ''))?.[1]?.toLowerCase()
})

await Fastify().register(authPlugin, {
  secret,
  url,
  claimsUpdater: (claims) => {
    const groups = claims.user?.attrs?.groups
    if (claims.user !== undefined && Array.isArray(groups) && groups.includes('admins')) claims.user.role = 'admin'
    return claims
  }
})

await Fastify().register(authPlugin, {
  secret,
  url,
  onEvent: (event) => {
    if (event.protocol === 'saml' && event.type === 'login.failed') app.log.warn({ provider: `saml:${event.provider}`, reason: event.reason }, 'SAML sign-in refused')
  }
})

// The options' types refuse what registration would refuse.
// @ts-expect-error: idp is required
await app.register(samlProvider, { name: 'sso' })
// @ts-expect-error: an IdP by fields needs its certificates
await app.register(samlProvider, { idp: { entityId: 'https://idp.example.com', ssoUrl: 'https://idp.example.com/sso' } })
// @ts-expect-error: clockSkew is a duration, not a flag
await app.register(samlProvider, { idp: { metadataUrl: 'https://idp.example.com/metadata' }, clockSkew: true })

// The types of the options' parts, named from SamlProviderOptions as the page shows.
type SamlIdp = Exclude<SamlProviderOptions['idp'], (tenant: string) => unknown> // one IdP, in one of its three forms
type SamlIdpOf = Extract<SamlProviderOptions['idp'], (tenant: string) => unknown> // (tenant) => that tenant's IdP
type SamlMapUser = NonNullable<SamlProviderOptions['mapUser']>
type SamlAssertion = Parameters<SamlMapUser>[0] // nameId, nameIdFormat, sessionIndex, issuer, tenant, attributes
type SamlUser = Parameters<SamlMapUser>[1] // id, name?, email?, attrs?, role?
const one: SamlIdp = { metadataUrl: 'https://idp.example.com/metadata.xml' }
const perTenant: SamlIdpOf = async (tenant) => tenant === 'acme' ? one : undefined
void ({ entityId: 'https://idp.example.com', ssoUrl: 'https://idp.example.com/sso', certs: ['PEM'] } satisfies SamlIdp)
// @ts-expect-error: one IdP is not a function of a tenant
void (perTenant satisfies SamlIdp)
declare const assertion: SamlAssertion
const fields: [string, string | undefined, Record<string, string[]>] = [assertion.nameId, assertion.tenant, assertion.attributes]
const user: SamlUser = { id: fields[0], email: assertion.attributes.mail?.[0] }
void user.id.length
