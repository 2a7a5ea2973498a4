/**
 * The examples of docs/guide/provider-tokens.md, compiled (lines as written there; test/docs/readme-examples.test.ts
 * checks they stay the same).
 */
import Fastify from 'fastify'
import authPlugin, { oauth2Provider, type CustomOAuth2ProviderOptions } from '../../index.js'
import { getProviderToken, revokeProviderToken } from '../../providers/index.js'

declare const corp: CustomOAuth2ProviderOptions

const app = Fastify()
await app.register(authPlugin, { secret: () => 'x'.repeat(40), url: 'https://example.com' })
await app.register(oauth2Provider, { ...corp, keepTokens: { key: process.env.PROVIDER_TOKENS_KEY!, revocationURL: 'https://sso.example.com/oauth/revoke' } })

app.get('/repos', { preHandler: app.auth.authenticate }, async (request) => {
  const { accessToken } = await getProviderToken(request, 'corp')
  return await (await fetch('https://api.example.com/repos', { headers: { authorization: `Bearer ${accessToken}` } })).json()
})
app.post('/disconnect', { preHandler: app.auth.authenticate }, async (request) => ({ revoked: await revokeProviderToken(request, 'corp') }))
