/**
 * The examples of docs/guide/captcha.md, breached-passwords.md and last-login-method.md, compiled (lines as written
 * there; test/docs/readme-examples.test.ts checks they stay the same).
 */
import Fastify from 'fastify'
import authPlugin, { directProvider, type CredChecker } from '../../index.js'
import { turnstileVerifier, hcaptchaVerifier, recaptchaV3Verifier } from '../../providers/index.js'
import { breachedPasswords } from '../../toolkit.js'

declare const secret: () => string
declare const url: string
declare const checker: CredChecker
declare const newPassword: string
declare const myCaptcha: { verify (token: string, ip: string): Promise<boolean> }

const app = Fastify()
await app.register(authPlugin, { secret, url, login: { captcha: turnstileVerifier({ secret: process.env.TURNSTILE_SECRET!, action: 'login' }) } })
await app.register(authPlugin, { secret, url, login: { captcha: hcaptchaVerifier({ secret: process.env.HCAPTCHA_SECRET!, sitekey: process.env.HCAPTCHA_SITEKEY!, providers: ['local'] }) } })
await app.register(authPlugin, { secret, url, login: { captcha: recaptchaV3Verifier({ secret: process.env.RECAPTCHA_SECRET!, action: 'login', minScore: 0.7, timeout: '3s' }) } })
await app.register(authPlugin, { secret, url, login: { captcha: async ({ token, remoteIp }) => await myCaptcha.verify(token, remoteIp) } })

const breached = breachedPasswords({ timeout: '2s', onUnavailable: 'allow' })
const { breached: known, count } = await breached.check(newPassword)
const offline = breachedPasswords({ file: '/etc/app/breached-sha1.txt', minCount: 10 })
await app.register(directProvider, { name: 'local', checker, breachedPasswords: { check: breachedPasswords(), onBreached: 'refuse' } })

await app.register(authPlugin, { secret, url, login: { lastMethod: true } })

export { known, count, offline }
