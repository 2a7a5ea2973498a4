/**
 * The code examples of the provider pages (docs/providers/*.md), compiled (lines as written there; test/docs/readme-examples.test.ts
 * checks they stay the same).
 */
import Fastify from 'fastify'
import { bcryptVerify } from '../../toolkit.js'
import authPlugin, { oauth2Provider, appleProvider, oidcProvider, emailProvider, telegramProvider, directProvider, type CredChecker } from '../../index.js'
import { appleKeyFromFile, SmtpSender, normaliseAccountName, breachedPasswords } from '../../providers/index.js'

declare const secret: () => string
declare const cid: string
declare const csecret: string
declare const username: string
declare const password: string
declare const token: string
declare const checker: CredChecker
declare const adminHash: string

const app = Fastify()
await app.register(authPlugin, { secret, url: 'https://example.com' })
await app.register(oauth2Provider, { name: 'github', cid: process.env.GITHUB_CID!, csecret: process.env.GITHUB_CSEC! })
await app.register(appleProvider, { clientId: 'com.example.web', teamId: 'TEAM123456', keyId: 'KEY1234567', keyLoader: appleKeyFromFile('/secrets/AuthKey_KEY1234567.p8') })
await app.register(oidcProvider, { name: 'sso', cid: process.env.OIDC_CLIENT_ID!, csecret: process.env.OIDC_CLIENT_SECRET!, issuer: 'https://sso.example.com/realms/main' })
await app.register(oauth2Provider, {
  name: 'corp', cid, csecret,
  endpoint: { authURL: 'https://corp.example/oauth/authorize', tokenURL: 'https://corp.example/oauth/token' },
  infoURL: 'https://corp.example/api/me',
  scopes: ['profile'],
  mapUser: (data) => ({ id: String(data.id), name: String(data.display_name) })
})
await app.register(emailProvider, {
  name: 'email',
  template: 'Sign in to Example: https://example.com/auth/email/login?token={{.Token}}',
  sender: new SmtpSender({ host: 'smtp.example.com', port: 587, startTLS: true, username, password, from: 'no-reply@example.com' })
})
await app.register(telegramProvider, { token })
// upgrading.md: the registrations that replace addOidcProvider and addTelegramProvider.
await app.register(async (app) => {
  const name = 'sso2'; const cid = 'c'; const csecret = 's'; const issuer = 'https://sso.example.com'
  await app.register(oidcProvider, { name, cid, csecret, issuer })
  const opts = { token, name: 'telegram2' }
  await app.register(telegramProvider, opts)
})
await app.register(directProvider, { name: 'local', checker })

// docs/providers/password.md: the example and one per option
const aliceHash = process.env.ALICE_HASH
if (!aliceHash) throw new Error('ALICE_HASH is not set: npx fastify-gatehouse hash --bcrypt --env ALICE_HASH >> .env')
const hashes = new Map([['alice', aliceHash]])
async function checkPassword (user: string, passwd: string): Promise<boolean> {
  const hash = hashes.get(user)
  return hash !== undefined && await bcryptVerify(passwd, hash)
}
await app.register(directProvider, { name: 'local', checker: checkPassword })
await app.register(directProvider, { name: 'staff', checker })
await app.register(directProvider, { checker: async (user, passwd) => user === 'admin' && await bcryptVerify(passwd, adminHash) })
const accounts = new Map([['alice', { name: 'Alice', id: '42', hash: process.env.ALICE_HASH! }]])
await app.register(directProvider, {
  name: 'members',
  checker: async (user, passwd) => {
    const account = accounts.get(normaliseAccountName(user))
    if (account === undefined || !await bcryptVerify(passwd, account.hash)) return false
    return { ok: true, user: { name: account.name, id: account.id } }
  }
})
await app.register(directProvider, { name: 'legacy', checker, allowGet: true })
await app.register(directProvider, { name: 'local', checker, breachedPasswords: { check: breachedPasswords({ onUnavailable: 'allow' }), onBreached: 'warn' } })
