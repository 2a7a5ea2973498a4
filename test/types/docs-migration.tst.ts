/**
 * The examples of docs/guide/migrating-from-go-pkgz.md, compiled (lines as written there;
 * test/docs/readme-examples.test.ts checks they stay the same).
 */
import Fastify from 'fastify'
import authPlugin from '../../index.js'
import { oauth2Provider } from '../../index.js'

const app = Fastify()
await app.register(oauth2Provider, { name: 'github', cid: process.env.GITHUB_CID!, csecret: process.env.GITHUB_CSEC!, idFrom: 'login' })
await app.register(oauth2Provider, { name: 'microsoft', cid: process.env.MICROSOFT_CID!, csecret: process.env.MICROSOFT_CSEC!, idFrom: 'graph', tenant: 'organizations' })
await app.register(authPlugin, {
  secret: () => process.env.SESSION_SECRET!,
  url: 'https://example.com',
  issuer: 'my-go-service',
  migration: { goPkgz: { secret: process.env.GO_AUTH_SECRET! } }
})
