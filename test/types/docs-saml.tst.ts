/**
 * The examples of docs/providers/saml.md outside its Options section, compiled (lines as written there;
 * test/docs/readme-examples.test.ts checks they stay the same).
 */
import Fastify from 'fastify'
import authPlugin, { samlProvider } from '../../index.js'

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

// The options' types refuse what registration would refuse.
// @ts-expect-error: idp is required
await app.register(samlProvider, { name: 'sso' })
// @ts-expect-error: an IdP by fields needs its certificates
await app.register(samlProvider, { idp: { entityId: 'https://idp.example.com', ssoUrl: 'https://idp.example.com/sso' } })
// @ts-expect-error: clockSkew is a duration, not a flag
await app.register(samlProvider, { idp: { metadataUrl: 'https://idp.example.com/metadata' }, clockSkew: true })
