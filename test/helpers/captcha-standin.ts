/**
 * A local stand-in for the three captcha services' siteverify endpoints (the real ones are on the internet). It
 * issues tokens the way a solved widget would get them (for a site key, on a host name, with an action and a
 * score) and answers siteverify as each service documents it: a form POST of `secret`, `response`, `remoteip`
 * (and hCaptcha's `sitekey`), single-use tokens (Turnstile and reCAPTCHA `timeout-or-duplicate`, hCaptcha
 * `already-seen-response`), a token of another site `invalid-input-response` (hCaptcha with `sitekey`:
 * `sitekey-secret-mismatch`), a wrong secret `invalid-input-secret`. `mode` makes it slow or down.
 */
import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import formbody from '@fastify/formbody'

export type CaptchaService = 'turnstile' | 'hcaptcha' | 'recaptcha'

/** What a solved widget's token stands for; without `hostname` the answer names none (a token solved in an app, not on a page). */
export interface IssuedToken { service: CaptchaService; sitekey: string; hostname?: string | undefined; action?: string; score?: number }

export interface CaptchaStandin {
  /** Base address; siteverify at `/turnstile/v0/siteverify`, `/hcaptcha/siteverify`, `/recaptcha/api/siteverify`. */
  base: string
  url(service: CaptchaService): string
  /** Registers a site: its key and secret. */
  site(service: CaptchaService, sitekey: string, secret: string): void
  /** A token as the widget of `sitekey` would get it on `hostname`. */
  issue(token: IssuedToken): string
  /** Siteverify requests received (the form fields). */
  readonly calls: Array<Record<string, string>>
  /** `ok` answers; `slow` never answers (the client's deadline must fire); `down` answers 500. */
  mode: 'ok' | 'slow' | 'down'
  close(): Promise<void>
}

const PATHS: Record<CaptchaService, string> = {
  turnstile: '/turnstile/v0/siteverify',
  hcaptcha: '/hcaptcha/siteverify',
  recaptcha: '/recaptcha/api/siteverify'
}

export async function captchaStandin (): Promise<CaptchaStandin> {
  const secrets = new Map<string, { service: CaptchaService; sitekey: string }>()
  const tokens = new Map<string, IssuedToken>()
  const used = new Set<string>()
  const calls: Array<Record<string, string>> = []
  const app: FastifyInstance = Fastify()
  await app.register(formbody)
  const held: Array<() => void> = []
  const standin: CaptchaStandin = {
    base: '',
    url: (service) => `${standin.base}${PATHS[service]}`,
    site: (service, sitekey, secret) => { secrets.set(secret, { service, sitekey }) },
    issue: (token) => {
      const value = `${token.service}.${randomBytes(24).toString('base64url')}`
      tokens.set(value, token)
      return value
    },
    calls,
    mode: 'ok',
    close: async () => { for (const release of held) release(); await app.close() }
  }
  for (const service of Object.keys(PATHS) as CaptchaService[]) {
    app.post(PATHS[service], async (request, reply) => {
      const form = request.body as Record<string, string>
      calls.push({ ...form })
      if (standin.mode === 'slow') await new Promise<void>((resolve) => { held.push(resolve) })
      if (standin.mode === 'down') return await reply.code(500).send('internal error')
      return answer(service, form, secrets, tokens, used)
    })
  }
  standin.base = await app.listen({ port: 0, host: '127.0.0.1' })
  return standin
}

function answer (service: CaptchaService, form: Record<string, string>, secrets: Map<string, { service: CaptchaService; sitekey: string }>, tokens: Map<string, IssuedToken>, used: Set<string>): Record<string, unknown> {
  const fail = (code: string): Record<string, unknown> => ({ success: false, 'error-codes': [code] })
  if (form.secret === undefined || form.secret === '') return fail('missing-input-secret')
  const site = secrets.get(form.secret)
  if (site === undefined || site.service !== service) return fail('invalid-input-secret')
  if (form.response === undefined || form.response === '') return fail('missing-input-response')
  const token = tokens.get(form.response)
  if (token === undefined || token.service !== service) return fail('invalid-input-response')
  if (service === 'hcaptcha' && form.sitekey !== undefined && form.sitekey !== token.sitekey) return fail('sitekey-secret-mismatch')
  if (token.sitekey !== site.sitekey) return fail('invalid-input-response')
  if (used.has(form.response)) return fail(service === 'hcaptcha' ? 'already-seen-response' : 'timeout-or-duplicate')
  used.add(form.response)
  const base = { success: true, challenge_ts: new Date().toISOString(), ...(token.hostname === undefined ? {} : { hostname: token.hostname }), 'error-codes': [] }
  if (service === 'turnstile') return { ...base, action: token.action ?? '', cdata: '' }
  if (service === 'recaptcha') return { ...base, action: token.action, score: token.score }
  return { ...base, credit: false }
}
