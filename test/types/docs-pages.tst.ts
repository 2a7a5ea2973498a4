/**
 * The examples of docs/guide/pages.md, compiled (lines as written there; test/docs/readme-examples.test.ts checks
 * they stay the same).
 */
import Fastify from 'fastify'
import authPlugin from '../../index.js'

declare const secret: () => string
declare const url: string
/** The app's own password check. */
declare function checkPassword (user: string, passwd: string): Promise<boolean>

const app = Fastify()
await app.register(authPlugin, {
  secret: process.env.AUTH_SECRET!,
  url: 'https://example.com',
  login: { page: true },
  revocation: { sessionList: { page: true } },
  providers: [
    { kind: 'direct', name: 'local', checker: async (user, passwd) => await checkPassword(user, passwd) },
    { kind: 'oauth2', name: 'github', cid: process.env.GITHUB_CID!, csecret: process.env.GITHUB_CSEC! }
  ]
})
await app.register(authPlugin, { secret, url, login: { page: { theme: { accent: '#0a7d33', radius: '2px', font: 'Georgia, serif' } } } })
