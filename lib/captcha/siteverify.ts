/**
 * The built-in captcha verifiers: Cloudflare Turnstile, hCaptcha and reCAPTCHA v3. All three take the same
 * "siteverify" request (a form POST of `secret`, `response`, `remoteip`) and answer JSON with `success`,
 * `hostname` and `error-codes`; each adds its own checks (Turnstile's and reCAPTCHA's `action`, reCAPTCHA's
 * `score`, hCaptcha's `sitekey`). Facts from the services' documentation:
 * - Turnstile: https://developers.cloudflare.com/turnstile/get-started/server-side-validation/ (single-use tokens,
 *   a replay answers `timeout-or-duplicate`; at most 2048 characters; valid 300 s);
 * - hCaptcha: https://docs.hcaptcha.com/#verify-the-user-response-server-side (optional `sitekey`, refused with
 *   `sitekey-secret-mismatch` when the token is another site's; `already-seen-response`, `expired-input-response`);
 * - reCAPTCHA v3: https://developers.google.com/recaptcha/docs/verify and https://developers.google.com/recaptcha/docs/v3
 *   (`score` 0.0-1.0, 0.5 the suggested start; verify `action`; `timeout-or-duplicate`).
 * A token the service refuses is 403 `GATEHOUSE_CAPTCHA`; a service that is slow, down or refuses our own request
 * (a wrong secret) is 503 `GATEHOUSE_UNAVAILABLE`, so a misconfiguration is never read as a bot.
 */
import { ErrorCodes, HttpError, OptionsError } from '../errors.js'
import { checkKeys, optionDuration, optionList, optionString, optionUrl } from '../options.js'
// The outbound HTTP client loads with the first check, not with the package (the import cost, issue 46).
import type * as OutboundHttp from '../http/request.js'
import type { Duration } from '../duration.js'
import type { CaptchaCheck, CaptchaVerdict, CaptchaVerifier } from './verifier.js'

/** What every built-in verifier takes. */
export interface SiteverifyOptions {
  /** The secret key of the site, from the service's console. Required. */
  secret: string
  /** The service's siteverify address (a local stand-in in tests, a proxy). Default the service's own. */
  verifyUrl?: string | undefined
  /** Longest wait for the service's answer: ms or like `'5s'`; past it the login is refused 503. Default 5 s. */
  timeout?: Duration | undefined
  /** The host names a token may have been solved on. Default the host of the app's `url`. */
  hostnames?: string[] | undefined
  /** The providers (by route name) whose logins need a captcha. Default every provider. */
  providers?: string[] | undefined
  /** The request field carrying the token. Default the widget's own (`cf-turnstile-response`, …). */
  field?: string | undefined
}

/** Cloudflare Turnstile: `SiteverifyOptions` and the widget's `action`, checked when given. */
export interface TurnstileOptions extends SiteverifyOptions {
  /** The widget's `data-action`; a token of another action is refused. Default not checked. */
  action?: string | undefined
}

/** hCaptcha: `SiteverifyOptions` and the site key, which the service checks the token against. */
export interface HcaptchaOptions extends SiteverifyOptions {
  /** The site key the token must belong to (sent as `sitekey`; recommended by hCaptcha). Default not sent. */
  sitekey?: string | undefined
}

/** reCAPTCHA v3: `SiteverifyOptions`, the expected action and the lowest score let in. */
export interface RecaptchaV3Options extends SiteverifyOptions {
  /** The action the page executed (`grecaptcha.execute(key, { action })`); another is refused. Default `login`. */
  action?: string | undefined
  /** The lowest score (0.0 bot … 1.0 human) let in. Default 0.5, Google's suggested start. */
  minScore?: number | undefined
}

const TURNSTILE_URL = 'https://challenges.cloudflare.com/turnstile/v0/siteverify'
const HCAPTCHA_URL = 'https://api.hcaptcha.com/siteverify'
const RECAPTCHA_URL = 'https://www.google.com/recaptcha/api/siteverify'
const COMMON_KEYS = ['secret', 'verifyUrl', 'timeout', 'hostnames', 'providers', 'field'] as const
/** A siteverify answer is a few hundred bytes. */
const MAX_ANSWER = 16 * 1024

/** Error codes that say the token was already used or ran out (as the services name them). */
const REUSED = new Set(['timeout-or-duplicate', 'already-seen-response', 'expired-input-response', 'invalid-or-already-seen-response'])
/** Error codes that say the token is not one of this site's. */
const INVALID = new Set(['invalid-input-response', 'missing-input-response', 'sitekey-secret-mismatch'])

/** What a siteverify answer says, read defensively. */
interface SiteverifyAnswer { success: boolean; hostname?: string | undefined; action?: string | undefined; score?: number | undefined; errorCodes: string[] }

interface ServiceSettings {
  name: string
  url: URL
  secret: string
  timeoutMs: number
  hostnames: string[]
  extra: Record<string, string>
  judge: (answer: SiteverifyAnswer) => CaptchaVerdict
}

/** Cloudflare Turnstile (field `cf-turnstile-response`). */
export function turnstileVerifier (opts: TurnstileOptions): CaptchaVerifier {
  checkKeys(opts, [...COMMON_KEYS, 'action'], 'captcha')
  const o = opts
  const action = optionString('captcha.action', o.action)
  return builtIn('turnstile', o, TURNSTILE_URL, 'cf-turnstile-response', {}, (a) => action !== undefined && a.action !== action ? refuse('action') : { ok: true })
}

/** hCaptcha (field `h-captcha-response`). */
export function hcaptchaVerifier (opts: HcaptchaOptions): CaptchaVerifier {
  checkKeys(opts, [...COMMON_KEYS, 'sitekey'], 'captcha')
  const o = opts
  const sitekey = optionString('captcha.sitekey', o.sitekey)
  return builtIn('hcaptcha', o, HCAPTCHA_URL, 'h-captcha-response', sitekey === undefined ? {} : { sitekey }, () => ({ ok: true }))
}

/** reCAPTCHA v3 (field `g-recaptcha-response`): the score and the action are checked. */
export function recaptchaV3Verifier (opts: RecaptchaV3Options): CaptchaVerifier {
  checkKeys(opts, [...COMMON_KEYS, 'action', 'minScore'], 'captcha')
  const o = opts
  const action = optionString('captcha.action', o.action) ?? 'login'
  const minScore = o.minScore ?? 0.5
  if (typeof minScore !== 'number' || !(minScore >= 0 && minScore <= 1)) throw new OptionsError('captcha.minScore', 'must be a number from 0 to 1')
  return builtIn('recaptcha', o, RECAPTCHA_URL, 'g-recaptcha-response', {}, (a) => {
    if (a.action !== action) return refuse('action')
    // A v3 answer without a score is not a v3 token (a v2 checkbox key): not let in.
    if (typeof a.score !== 'number' || a.score < minScore) return refuse('score')
    return { ok: true }
  })
}

function builtIn (name: string, o: SiteverifyOptions, defaultUrl: string, defaultField: string, extra: Record<string, string>, judge: ServiceSettings['judge']): CaptchaVerifier {
  const secret = optionString('captcha.secret', o.secret)
  if (secret === undefined) throw new OptionsError('captcha.secret', `is required: the secret key of the ${name} site`)
  const url = optionUrl('captcha.verifyUrl', o.verifyUrl ?? defaultUrl)
  const settings: ServiceSettings = {
    name, url, secret, extra, judge,
    timeoutMs: optionDuration('captcha.timeout', o.timeout, 5000),
    hostnames: optionList('captcha.hostnames', o.hostnames).map((h) => h.toLowerCase())
  }
  return {
    field: optionString('captcha.field', o.field) ?? defaultField,
    providers: providersOption(o.providers),
    verify: async (check) => await siteverify(settings, check)
  }
}

async function siteverify (s: ServiceSettings, check: CaptchaCheck): Promise<CaptchaVerdict> {
  const answer = await ask(s, new URLSearchParams({ secret: s.secret, response: check.token, remoteip: check.remoteIp, ...s.extra }))
  if (!answer.success) {
    const reason = answer.errorCodes.find((c) => REUSED.has(c)) !== undefined ? 'reused' : answer.errorCodes.some((c) => INVALID.has(c)) || answer.errorCodes.length === 0 ? 'invalid' : undefined
    // Any other code (a wrong secret, a malformed request, the service's own failure) is ours or theirs, not the user's.
    if (reason === undefined) throw unavailable(s.name, `answered ${answer.errorCodes.join(', ')}`)
    return refuse(reason)
  }
  const allowed = s.hostnames.length > 0 ? s.hostnames : [check.hostname.toLowerCase()]
  if (answer.hostname === undefined || !allowed.includes(answer.hostname.toLowerCase())) return refuse('hostname')
  return s.judge(answer)
}

/** One siteverify call under the deadline: the answer read, or 503 when the service cannot tell. */
async function ask (s: ServiceSettings, form: URLSearchParams): Promise<SiteverifyAnswer> {
  let status: number
  let body: Buffer
  try {
    const http = await loadHttp()
    ;({ status, body } = await http.withDeadline(s.timeoutMs, async (deadline) => await http.outboundRequest(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      deadline,
      maxBytes: MAX_ANSWER,
      span: 'gatehouse.captcha.siteverify'
    })))
  } catch (err) {
    throw unavailable(s.name, err instanceof Error ? err.message : String(err), err)
  }
  if (status !== 200) throw unavailable(s.name, `answered HTTP ${status}`)
  return readAnswer(s.name, body)
}

function readAnswer (name: string, body: Buffer): SiteverifyAnswer {
  let json: unknown
  try { json = JSON.parse(body.toString('utf8')) } catch { throw unavailable(name, 'answered something that is not JSON') }
  if (json === null || typeof json !== 'object' || typeof (json as { success?: unknown }).success !== 'boolean') throw unavailable(name, 'answered without a success field')
  const j = json as Record<string, unknown>
  const codes = Array.isArray(j['error-codes']) ? j['error-codes'].filter((c): c is string => typeof c === 'string') : []
  return {
    success: j.success === true,
    hostname: typeof j.hostname === 'string' ? j.hostname : undefined,
    action: typeof j.action === 'string' ? j.action : undefined,
    score: typeof j.score === 'number' ? j.score : undefined,
    errorCodes: codes
  }
}

function providersOption (value: unknown): string[] | undefined {
  if (value === undefined) return undefined
  const list = optionList('captcha.providers', value)
  if (list.length === 0) throw new OptionsError('captcha.providers', 'is empty: leave it out to guard every provider')
  return list
}

function refuse (reason: string): CaptchaVerdict {
  return { ok: false, reason }
}

/** 503: the service could not decide (logged with the cause by the auth routes' error handler). */
function unavailable (name: string, what: string, cause?: unknown): HttpError {
  return new HttpError(503, 'service unavailable', 'the captcha service could not be reached; try again', ErrorCodes.UNAVAILABLE, {
    cause: new Error(`captcha: ${name} siteverify ${what}`, { cause })
  })
}

/** The outbound HTTP client (lib/http/request.ts), imported at the first check. */
async function loadHttp (): Promise<typeof OutboundHttp> {
  return await import('../http/request.js')
}
