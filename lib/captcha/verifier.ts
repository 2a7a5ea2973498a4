/**
 * The captcha of the login routes (the auth core's `captcha` option): what a verifier is, and the option read
 * into one checked form. The check itself runs in the core's login prelude (plugins/core/signin/captcha.ts), once for
 * every provider; the built-in verifiers of Turnstile, hCaptcha and reCAPTCHA v3 are in siteverify.ts.
 */
import { OptionsError } from '../errors.js'
import { optionList } from '../options.js'

/** What a verifier is asked about one login request. */
export interface CaptchaCheck {
  /** The token the widget put in the form (the request field the verifier names). */
  readonly token: string
  /** The client's address (`request.ip`), which the services take as `remoteip`. */
  readonly remoteIp: string
  /** The provider whose login the request starts. */
  readonly provider: string
  /** The host name of the app's `url`: the page a token must have been solved on, unless the verifier says others. */
  readonly hostname: string
}

/**
 * A verifier's answer: `true`/`{ ok: true }` lets the login go on; `false`/`{ ok: false, reason }` refuses it
 * (403 `GATEHOUSE_CAPTCHA`, the reason in `details` and the audit). A thrown `HttpError` is answered as it is; any
 * other error is 503 `GATEHOUSE_UNAVAILABLE` (the service could not tell).
 */
export type CaptchaVerdict = boolean | { readonly ok: boolean; readonly reason?: string | undefined }

/** A captcha service, or the host's own check. */
export interface CaptchaVerifier {
  /**
   * The request field (form, JSON body or query) the token comes in: `cf-turnstile-response`,
   * `h-captcha-response`, `g-recaptcha-response` for the built-ins, as their widgets post it. Default `captcha`.
   */
  readonly field?: string | undefined
  /** The providers (by route name) whose logins need a captcha. Default every provider. */
  readonly providers?: readonly string[] | undefined
  /** Decides on one token. */
  verify(check: CaptchaCheck): CaptchaVerdict | Promise<CaptchaVerdict>
}

/** The `captcha` option: a verifier, or a function deciding on a token in the field `captcha` of every provider. */
export type CaptchaOption = CaptchaVerifier | ((check: CaptchaCheck) => CaptchaVerdict | Promise<CaptchaVerdict>)

/** The `captcha` option, checked. */
export interface ResolvedCaptcha {
  readonly field: string
  /** Whether a provider's logins need a captcha. */
  guards(provider: string): boolean
  verify(check: CaptchaCheck): CaptchaVerdict | Promise<CaptchaVerdict>
}

/** Longest token read: Turnstile documents 2048 characters; the others are shorter. */
export const MAX_CAPTCHA_TOKEN = 4096

const FIELD_RE = /^[A-Za-z0-9_-]{1,64}$/

/** Reads the `login.captcha` option: undefined (off), a verifier or a function. OptionsError naming `name…`. */
export function resolveCaptcha (value: unknown, name = 'login.captcha'): ResolvedCaptcha | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'function') return { field: 'captcha', guards: () => true, verify: value as CaptchaVerifier['verify'] }
  if (value === null || typeof value !== 'object' || typeof (value as CaptchaVerifier).verify !== 'function') {
    throw new OptionsError(name, 'must be a captcha verifier ({ verify(check), field?, providers? }, e.g. turnstileVerifier({ secret })) or a function (check) => boolean')
  }
  const verifier = value as CaptchaVerifier
  const field = verifier.field ?? 'captcha'
  if (typeof field !== 'string' || !FIELD_RE.test(field)) throw new OptionsError(`${name}.field`, 'must be 1-64 letters, digits, "_" or "-"')
  const providers = verifier.providers === undefined ? undefined : new Set(optionList(`${name}.providers`, verifier.providers))
  if (providers?.size === 0) throw new OptionsError(`${name}.providers`, `is empty: leave it out to guard every provider, or leave ${name} out`)
  return { field, guards: (provider) => providers === undefined || providers.has(provider), verify: async (check) => await verifier.verify(check) }
}
