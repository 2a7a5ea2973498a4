/**
 * The examples of docs/providers/builtins.md (the built-ins' settings examples are in docs-provider-options.tst.ts).
 */
import Fastify from 'fastify'
import authPlugin, { oauth2Provider } from '../../index.js'

declare const cid: string
declare const csecret: string
declare const secret: () => string

const app = Fastify()
await app.register(authPlugin, { secret, url: 'https://example.com' })
await app.register(oauth2Provider, { name: 'twitch', cid: process.env.TWITCH_CID!, csecret: process.env.TWITCH_CSEC! })
await app.register(oauth2Provider, { name: 'keycloak', cid, csecret, issuer: 'https://sso.example.com/realms/acme' })
// @ts-expect-error: not a built-in's name (a custom provider needs `endpoint`, `mapUser`)
await app.register(oauth2Provider, { name: 'myspace', cid, csecret, issuer: 'https://x.example' })
