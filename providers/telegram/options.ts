import type { Duration } from '../../lib/duration.js'
import { OptionsError } from '../../lib/errors.js'
import { checkKeys, optionBoolean, optionDuration, optionLifetime, optionName, optionString, optionUrl } from '../../lib/options.js'
import type { StateStoreOption } from '../../stores/state/resolve.js'

/** Options of `telegramProvider`. Seed names in brackets. */
export interface TelegramProviderOptions {
  /** Bot token from `@BotFather` (`123456:ABC-...`). Required. Never logged. */
  token: string
  /** Provider name and route segment. Default `telegram`. (ProviderName) */
  name?: string | undefined
  /** Bot API base address. Default `https://api.telegram.org`. */
  apiUrl?: string | undefined
  /** Sent to the user after a successful start. (SuccessMsg) */
  successMsg?: string | undefined
  /** Sent to the user for an unknown, used or expired login token. (ErrorMsg) */
  errorMsg?: string | undefined
  /** How long a login request waits for the start press: ms or `'10m'`. Default 10 minutes. */
  requestTtl?: Duration | undefined
  /** How long Telegram may hold one getUpdates long poll (whole seconds, at most 50). Default 30 s. */
  pollTimeout?: Duration | undefined
  /** Timeout of every other Bot API call and of the avatar download. Default 10 s. */
  requestTimeout?: Duration | undefined
  /** Pause after a failed poll (Bot API down, another poller took over) or a state-store outage. Default 3 s. */
  retryDelay?: Duration | undefined
  /**
   * Whether this instance polls the bot. Telegram delivers each update to one getUpdates caller only and
   * answers 409 to concurrent callers, so behind a load balancer let one instance poll. Default true.
   */
  polling?: boolean | undefined
  /** Take the user's Telegram profile photo into the avatar proxy. Default true. */
  avatar?: boolean | undefined
  /** Where pending logins live; share it between instances. Default: the core's state store. */
  stateStore?: StateStoreOption | undefined
}

/**
 * Options of the Telegram provider, which had this name before.
 * @deprecated Use `TelegramProviderOptions` (the name every provider's options have); goes in 1.0.
 */
export type TelegramOptions = TelegramProviderOptions

export interface ResolvedTelegramOptions {
  token: string
  name: string
  apiUrl: string
  successMsg: string
  errorMsg: string
  requestTtlMs: number
  pollTimeoutSec: number
  requestTimeoutMs: number
  retryDelayMs: number
  polling: boolean
  avatar: boolean
  stateStore: StateStoreOption | undefined
}

const KEYS = [
  'token', 'name', 'apiUrl', 'successMsg', 'errorMsg', 'requestTtl', 'pollTimeout', 'requestTimeout', 'retryDelay',
  'polling', 'avatar', 'stateStore'
]

export function resolveTelegramOptions (opts: TelegramProviderOptions, warn: (text: string) => void): ResolvedTelegramOptions {
  const o = checkKeys(opts, KEYS, 'telegram') as unknown as TelegramOptions
  if (typeof o.token !== 'string' || !/^\d+:[A-Za-z0-9_-]+$/.test(o.token)) throw new OptionsError('telegram.token', 'must be a bot token like "123456:ABC-DEF..."')
  const apiUrl = optionUrl('telegram.apiUrl', o.apiUrl ?? 'https://api.telegram.org').href.replace(/\/$/, '')
  const pollMs = optionDuration('telegram.pollTimeout', o.pollTimeout, 30_000)
  if (pollMs > 50_000) throw new OptionsError('telegram.pollTimeout', 'must be at most 50 seconds')
  return {
    token: o.token,
    name: optionName('telegram.name', o.name, 'telegram'),
    apiUrl,
    successMsg: optionString('telegram.successMsg', o.successMsg) ?? '✅ You are signed in. Go back to the site to continue.',
    errorMsg: optionString('telegram.errorMsg', o.errorMsg) ?? '❌ This login link is invalid or has expired. Start again from the site.',
    requestTtlMs: optionLifetime('telegram.requestTtl', o.requestTtl, 10 * 60_000, warn),
    pollTimeoutSec: Math.max(1, Math.round(pollMs / 1000)),
    requestTimeoutMs: optionDuration('telegram.requestTimeout', o.requestTimeout, 10_000),
    retryDelayMs: optionDuration('telegram.retryDelay', o.retryDelay, 3_000),
    polling: optionBoolean('telegram.polling', o.polling, true),
    avatar: optionBoolean('telegram.avatar', o.avatar, true),
    stateStore: o.stateStore
  }
}
