/**
 * The per-option examples of the provider pages (the `## Options` section of docs/providers/*.md), compiled
 * (lines as written there; test/docs/readme-examples.test.ts checks they stay the same, test/docs/providers.test.ts
 * that every option of each provider's options type has its heading).
 */
import Fastify from 'fastify'
import authPlugin, {
  appleProvider, devProvider, oauth2Provider, oidcProvider, passkeyProvider, telegramProvider, totpProvider, emailProvider,
  type CustomOAuth2ProviderOptions
} from '../../index.js'
import { appleKeyFromFile, type AppleProviderOptions, type Sender } from '../../providers/index.js'
import { stdLogger } from '../../compat.js'
import { discoverOidc, type DevProviderOptions } from '../../providers/index.js'

declare const cid: string
declare const csecret: string
declare const issuer: string
declare const template: string
declare const sender: Sender
declare const token: string
declare const encryptionKey: string
/** A custom provider's required options (docs/providers/custom-oauth2.md). */
declare const corp: CustomOAuth2ProviderOptions
/** Sign in with Apple's required options (docs/providers/apple.md). */
declare const apple: AppleProviderOptions
declare const devLoginPage: NonNullable<DevProviderOptions['loginPageHandler']>
declare const mailer: { deliver (address: string, text: string): Promise<void> }
declare const accounts: { byName (name: string): Promise<{ id: string } | undefined>; isActive (id: string): Promise<boolean> }

const app = Fastify()
await app.register(authPlugin, { secret: () => 's'.repeat(32), url: 'https://example.com' })

// docs/providers/oauth2.md
await app.register(oauth2Provider, { name: 'google', cid, csecret })
await app.register(oauth2Provider, { name: 'github', cid: process.env.GITHUB_CID!, csecret })
await app.register(oauth2Provider, { name: 'github', cid, csecret: process.env.GITHUB_CSEC! })
await app.register(oauth2Provider, { name: 'github', cid, csecret, authURL: 'https://github.example.com/login/oauth/authorize' })
await app.register(oauth2Provider, { name: 'github', cid, csecret, tokenURL: 'https://github.example.com/login/oauth/access_token' })
await app.register(oauth2Provider, { name: 'github', cid, csecret, infoURL: 'https://github.example.com/api/v3/user' })
await app.register(oauth2Provider, { name: 'google', cid, csecret, jwksURL: 'https://www.googleapis.com/oauth2/v3/certs' })
await app.register(oauth2Provider, { name: 'microsoft', cid, csecret, issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0' })
await app.register(oauth2Provider, { name: 'github', cid, csecret, scopes: ['read:user', 'user:email'] })
await app.register(oauth2Provider, { name: 'github', cid, csecret, timeout: '5s' })
await app.register(oauth2Provider, { name: 'github', cid, csecret, handshakeTtl: '5m' })
await app.register(oauth2Provider, { name: 'github', cid, csecret, stateStore: 'redis://127.0.0.1:6379/0' })
await app.register(oauth2Provider, { name: 'gitlab', cid, csecret, baseURL: 'https://gitlab.example.com' })
await app.register(oauth2Provider, { name: 'auth0', cid, csecret, domain: 'acme.eu.auth0.com' })
await app.register(oauth2Provider, { name: 'entra', cid, csecret, tenant: '9188040d-6c67-4c5b-b112-36a304b66dad' })
await app.register(oauth2Provider, { name: 'cognito', cid, csecret, domain: 'acme.auth.eu-west-1.amazoncognito.com', userPool: 'eu-west-1_AbCdEfGhI' })
await app.register(oauth2Provider, { name: 'paypal', cid, csecret, environment: 'sandbox' })
await app.register(oauth2Provider, { name: 'reddit', cid, csecret, userAgent: 'web:com.example.app:1.0 (by /u/example)' })
// @ts-expect-error: PayPal's environments are live and sandbox only
await app.register(oauth2Provider, { name: 'paypal', cid, csecret, environment: 'test' })
await app.register(oauth2Provider, { name: 'github', cid, csecret, keepTokens: { key: process.env.PROVIDER_TOKENS_KEY! } })
await app.register(oauth2Provider, { name: 'github', cid, csecret, idFrom: 'login' })
await app.register(oauth2Provider, { name: 'microsoft', cid, csecret, tenant: 'organizations' })

// docs/providers/custom-oauth2.md
await app.register(oauth2Provider, { ...corp, name: 'intranet' })
await app.register(oauth2Provider, { ...corp, cid: process.env.CORP_CID! })
await app.register(oauth2Provider, { ...corp, csecret: process.env.CORP_CSEC! })
await app.register(oauth2Provider, { ...corp, endpoint: { authURL: 'https://corp.example/oauth/authorize', tokenURL: 'https://corp.example/oauth/token' } })
await app.register(oauth2Provider, { ...corp, infoURL: 'https://corp.example/api/me' })
await app.register(oauth2Provider, { ...corp, mapUser: (data) => ({ id: String(data.id), name: String(data.display_name) }) })
await app.register(oauth2Provider, { ...corp, scopes: ['profile'] })
await app.register(oauth2Provider, { ...corp, oidc: { jwksURL: 'https://corp.example/oauth/jwks', issuer: 'https://corp.example' } })
await app.register(oauth2Provider, { ...corp, pkce: false })
await app.register(oauth2Provider, { ...corp, tokenAuth: 'post' })
await app.register(oauth2Provider, { ...corp, infoAuthScheme: 'OAuth' })
await app.register(oauth2Provider, { ...corp, authParams: { prompt: 'select_account' } })
await app.register(oauth2Provider, { ...corp, timeout: '5s' })
await app.register(oauth2Provider, { ...corp, handshakeTtl: '5m' })
await app.register(oauth2Provider, { ...corp, stateStore: 'redis://127.0.0.1:6379/0' })
await app.register(oauth2Provider, { ...corp, onRedirectUri: (uri) => { console.log('register %s at the provider', uri) } })
await app.register(oauth2Provider, { ...corp, keepTokens: { key: process.env.PROVIDER_TOKENS_KEY!, revocationURL: 'https://sso.example.com/oauth/revoke' } })

// docs/providers/oidc.md
await app.register(oidcProvider, { name: 'keycloak', cid, csecret, issuer })
await app.register(oidcProvider, { name: 'sso', cid: process.env.OIDC_CLIENT_ID!, csecret, issuer })
await app.register(oidcProvider, { name: 'sso', cid, csecret: process.env.OIDC_CLIENT_SECRET!, issuer })
await app.register(oidcProvider, { name: 'sso', cid, csecret, issuer: 'https://sso.example.com/realms/main' })
await app.register(oidcProvider, { name: 'sso', cid, csecret, issuer, scopes: ['openid', 'profile', 'email'] })
await app.register(oidcProvider, { name: 'sso', cid, csecret, issuer, mapUser: (data) => ({ id: String(data.sub), name: String(data.preferred_username) }) })
await app.register(oidcProvider, { name: 'sso', cid, csecret, issuer, authParams: { prompt: 'login' } })
await app.register(oidcProvider, { name: 'sso', cid, csecret, issuer, timeout: '5s' })
await app.register(oidcProvider, { name: 'sso', cid, csecret, issuer, handshakeTtl: '5m' })
await app.register(oidcProvider, { name: 'sso', cid, csecret, issuer, stateStore: 'redis://127.0.0.1:6379/0' })
await app.register(oidcProvider, { name: 'sso', cid, csecret, issuer, mfa: { amr: ['mfa', 'otp', 'hwk'], maxAge: '5m' } })
{
  // docs/providers/oidc.md: client authentication chosen by the app
  const discovered = await discoverOidc('https://sso.example.com/realms/main')
  await app.register(oauth2Provider, { name: 'sso', cid: process.env.OIDC_CLIENT_ID!, csecret: process.env.OIDC_CLIENT_SECRET!, ...discovered, tokenAuth: 'post' })
}

// docs/providers/apple.md
await app.register(appleProvider, { ...apple, keyLoader: appleKeyFromFile('/secrets/AuthKey_KEY1234567.p8') })
await app.register(appleProvider, { ...apple, clientId: 'com.example.web' })
await app.register(appleProvider, { ...apple, teamId: 'TEAM123456' })
await app.register(appleProvider, { ...apple, keyId: 'KEY1234567' })
await app.register(appleProvider, { ...apple, responseMode: 'query', scopes: [] })
await app.register(appleProvider, { ...apple, scopes: ['name', 'email'] })
await app.register(appleProvider, { ...apple, authURL: 'https://appleid.apple.com/auth/authorize' })
await app.register(appleProvider, { ...apple, tokenURL: 'https://appleid.apple.com/auth/token' })
await app.register(appleProvider, { ...apple, jwksURL: 'https://appleid.apple.com/auth/keys' })
await app.register(appleProvider, { ...apple, issuer: 'https://appleid.apple.com' })
await app.register(appleProvider, { ...apple, timeout: '5s' })
await app.register(appleProvider, { ...apple, handshakeTtl: '5m' })
await app.register(appleProvider, { ...apple, stateStore: 'redis://127.0.0.1:6379/0' })

// docs/providers/dev.md
await app.register(devProvider, { port: 0 })
await app.register(devProvider, { timeout: '2s' })
await app.register(devProvider, { stateStore: 'memory://' })
await app.register(devProvider, { onServer: (server) => { console.log('dev OAuth2 server at %s', server.url) } })
await app.register(devProvider, { host: '127.0.0.1' })
await app.register(devProvider, { client: { cid: 'dev-client', csecret: 'dev-secret' } })
await app.register(devProvider, { withLoginPage: false, autoLoginUser: 'alice' })
await app.register(devProvider, { withLoginPage: true, loginPageHandler: devLoginPage })
await app.register(devProvider, { withLoginPage: false, autoLoginUser: 'bob' })
await app.register(devProvider, { emailFn: (user) => `${user}@example.com` })
await app.register(devProvider, { redirectUris: ['http://localhost:8080/auth/dev/callback'] })
await app.register(devProvider, { logger: stdLogger() })
await app.register(devProvider, { codeTtl: '30s' })
await app.register(devProvider, { tokenTtl: '10m' })
await app.register(devProvider, { loginTtl: '5m' })

// docs/providers/email.md
await app.register(emailProvider, { name: 'mail', template, sender })
await app.register(emailProvider, { name: 'email', sender, template: 'Sign in to Example: https://example.com/auth/email/login?token={{.Token}}' })
await app.register(emailProvider, { name: 'email', template, sender: async (address, text) => { await mailer.deliver(address, text) } })
await app.register(emailProvider, { name: 'email', template, sender, tokenTtl: '15m' })
await app.register(emailProvider, { name: 'email', template, sender, stateStore: 'redis://127.0.0.1:6379/0' })
await app.register(emailProvider, { name: 'email', template, sender, escape: 'html' })
await app.register(emailProvider, { name: 'email', template, sender, sendTimeout: '10s' })
await app.register(emailProvider, { name: 'sms', template, sender, isAddress: (address) => /^\+[0-9]{8,15}$/.test(address) })
await app.register(emailProvider, { name: 'email', sender, template: 'Your Example sign-in code: {{.Code}}', code: { digits: 6, ttl: '10m', attempts: 5 } })
await app.register(emailProvider, { name: 'email', sender, template: 'Your code: {{.Code}}', code: true })

// docs/providers/telegram.md
await app.register(telegramProvider, { token: process.env.TELEGRAM_TOKEN! })
await app.register(telegramProvider, { token, name: 'tg' })
await app.register(telegramProvider, { token, apiUrl: 'http://127.0.0.1:8081' })
await app.register(telegramProvider, { token, successMsg: 'Signed in: you can go back to the site.' })
await app.register(telegramProvider, { token, errorMsg: 'This link has expired: start again on the site.' })
await app.register(telegramProvider, { token, requestTtl: '5m' })
await app.register(telegramProvider, { token, pollTimeout: '50s' })
await app.register(telegramProvider, { token, requestTimeout: '5s' })
await app.register(telegramProvider, { token, retryDelay: '10s' })
await app.register(telegramProvider, { token, polling: process.env.TELEGRAM_POLLER === '1' })
await app.register(telegramProvider, { token, avatar: false })
await app.register(telegramProvider, { token, stateStore: 'redis://127.0.0.1:6379/0' })

// docs/providers/passkeys.md
await app.register(passkeyProvider, { name: 'webauthn' })
await app.register(passkeyProvider, { store: 'redis://127.0.0.1:6379/0' })
await app.register(passkeyProvider, { rpID: 'example.com' })
await app.register(passkeyProvider, { rpName: 'Example' })
await app.register(passkeyProvider, { origins: ['https://example.com', 'https://app.example.com'] })
await app.register(passkeyProvider, { challengeTtl: '2m' })
await app.register(passkeyProvider, { userVerification: 'preferred' })
await app.register(passkeyProvider, { secondFactor: ['local'] })
await app.register(passkeyProvider, { secondFactor: ['local'], pendingTtl: '2m' })
await app.register(passkeyProvider, { findUser: async (name) => (await accounts.byName(name))?.id })
await app.register(passkeyProvider, { loadUser: async (user) => (await accounts.isActive(user.id)) ? user : null })
await app.register(passkeyProvider, { maxPerUser: 5 })
await app.register(passkeyProvider, { stateStore: 'redis://127.0.0.1:6379/0' })

// docs/providers/totp.md
await app.register(totpProvider, { encryptionKey, name: 'otp' })
await app.register(totpProvider, { encryptionKey: process.env.TOTP_KEY! })
await app.register(totpProvider, { encryptionKey, store: 'bolt:///var/lib/app/totp.db' })
await app.register(totpProvider, { encryptionKey, stateStore: 'redis://127.0.0.1:6379/0' })
await app.register(totpProvider, { encryptionKey, issuer: 'Example' })
await app.register(totpProvider, { encryptionKey, qrCode: false })
await app.register(totpProvider, { encryptionKey, secondFactor: ['local'] })
await app.register(totpProvider, { encryptionKey, secondFactor: ['local'], pendingTtl: '2m' })
await app.register(totpProvider, { encryptionKey, recentWithin: '10m' })
await app.register(totpProvider, { encryptionKey, algorithm: 'SHA256' })
await app.register(totpProvider, { encryptionKey, digits: 8 })
await app.register(totpProvider, { encryptionKey, period: 60 })
await app.register(totpProvider, { encryptionKey, window: 0 })
