/**
 * The demo's captcha: a stand-in for Cloudflare Turnstile served by the demo itself, so that a person sees the
 * captcha path without an account at Cloudflare and without the internet. The page's "I am not a robot" box plays
 * the widget (`POST /captcha-standin/solve` hands it a token, as a solved widget gets one), and the demo's password
 * login checks it with the package's own `turnstileVerifier`, whose `verifyUrl` points at the stand-in's
 * siteverify on loopback. The stand-in answers siteverify as Turnstile documents it
 * (https://developers.cloudflare.com/turnstile/get-started/server-side-validation/): a form POST of `secret`,
 * `response` and `remoteip`; JSON with `success`, `hostname`, `action`, `challenge_ts` and `error-codes`; tokens
 * single-use and valid 300 s. It proves nothing about who ticked the box: it is a stand-in, not a captcha.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { CaptchaVerifier } from '../index.js'
import { turnstileVerifier } from '../providers/index.js'

export const CAPTCHA_PATH = '/captcha-standin'
/** The widget's action, checked by the verifier. */
const ACTION = 'login'
const TOKEN_TTL_MS = 300_000
/** Unspent tokens kept at most; past it `solve` answers 503 until some expire (a loop cannot fill the memory). */
const MAX_TOKENS = 10_000

interface Solved { hostname: string; solvedAt: number }

export interface DemoCaptcha {
  /** The `captcha` option of the demo: Turnstile's verifier on the password login `local`. */
  verifier: CaptchaVerifier
  /** Adds the widget's and the siteverify routes. */
  register(app: FastifyInstance): Promise<void>
}

/** The stand-in of a demo listening on 127.0.0.1:`port` with the public `url`; `maxTokens` for tests. */
export function demoCaptcha (port: number, url: string, maxTokens = MAX_TOKENS): DemoCaptcha {
  // The site's secret: made per start, known to the verifier and the stand-in only.
  const secret = randomBytes(24).toString('base64url')
  const tokens = new Map<string, Solved>()
  const verifier = turnstileVerifier({
    secret,
    verifyUrl: `http://127.0.0.1:${port}${CAPTCHA_PATH}/siteverify`,
    action: ACTION,
    providers: ['local'],
    // The demo is opened as localhost or 127.0.0.1 as well as by its public URL.
    hostnames: [...new Set([new URL(url).hostname, 'localhost', '127.0.0.1'])]
  })

  const solve = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const now = Date.now()
    for (const [token, solved] of tokens) if (solved.solvedAt + TOKEN_TTL_MS <= now) tokens.delete(token)
    if (tokens.size >= maxTokens) return await reply.code(503).send({ error: 'service unavailable', details: 'too many unspent captcha tokens: try again later', code: 'DEMO_CAPTCHA_BUSY' })
    const token = `standin.${randomBytes(32).toString('base64url')}`
    tokens.set(token, { hostname: request.hostname, solvedAt: now })
    return await reply.header('cache-control', 'no-store').send({ token })
  }

  const siteverify = async (request: FastifyRequest): Promise<Record<string, unknown>> => {
    const body = (request.body ?? {}) as Record<string, unknown>
    const form = (name: string): string => typeof body[name] === 'string' ? body[name] : ''
    const fail = (code: string): Record<string, unknown> => ({ success: false, 'error-codes': [code] })
    if (form('secret') === '') return fail('missing-input-secret')
    if (form('secret') !== secret) return fail('invalid-input-secret')
    const response = form('response')
    if (response === '') return fail('missing-input-response')
    const solved = tokens.get(response)
    // A token of this stand-in's shape that is not kept was spent (or pruned when it expired).
    if (solved === undefined) return fail(response.startsWith('standin.') ? 'timeout-or-duplicate' : 'invalid-input-response')
    tokens.delete(response)
    if (solved.solvedAt + TOKEN_TTL_MS <= Date.now()) return fail('timeout-or-duplicate')
    return { success: true, 'error-codes': [], challenge_ts: new Date(solved.solvedAt).toISOString(), hostname: solved.hostname, action: ACTION }
  }

  return {
    verifier,
    async register (app) {
      await app.register(async (scope) => {
        scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 8192 }, (_request, body, done) => {
          done(null, Object.fromEntries(new URLSearchParams(body as string)))
        })
        scope.post(`${CAPTCHA_PATH}/solve`, solve)
        scope.post(`${CAPTCHA_PATH}/siteverify`, siteverify)
      })
    }
  }
}
