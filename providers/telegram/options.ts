import { parseDuration, type Duration } from '../../plugins/core/duration.js'
import type { StateStoreOption } from '../../plugins/state-store/resolve.js'

/** Options of `addTelegramProvider`. Seed names in brackets. */
export interface TelegramOptions {
  /** Bot token from @BotFather (`123456:ABC-...`). Required. Never logged. */
  token: string
  /** Provider name and route segment. Default `telegram`. (ProviderName) */
  name?: string
  /** Bot API base address. Default `https://api.telegram.org`. */
  apiUrl?: string
  /** Sent to the user after a successful start. (SuccessMsg) */
  successMsg?: string
  /** Sent to the user for an unknown, used or expired login token. (ErrorMsg) */
  errorMsg?: string
  /** How long a login request waits for the start press: ms or `'10m'`. Default 10 minutes. */
  requestTtl?: Duration
  /** How long Telegram may hold one getUpdates long poll (whole seconds, at most 50). Default 30 s. */
  pollTimeout?: Duration
  /** Timeout of every other Bot API call and of the avatar download. Default 10 s. */
  requestTimeout?: Duration
  /** Pause after a failed poll (Bot API down, another poller took over) or a state-store outage. Default 3 s. */
  retryDelay?: Duration
  /**
   * Whether this instance polls the bot. Telegram delivers each update to one getUpdates caller only and
   * answers 409 to concurrent callers, so behind a load balancer let one instance poll. Default true.
   */
  polling?: boolean
  /** Take the user's Telegram profile photo into the avatar proxy. Default true. */
  avatar?: boolean
  /** Where pending logins live; share it between instances. Default: the root `stateStore`, else in-memory. */
  stateStore?: StateStoreOption
}

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

const bad = (option: string, why: string): TypeError => new TypeError(`fastify-gatehouse: telegram option "${option}" ${why}`)

export function resolveTelegramOptions (opts: TelegramOptions): ResolvedTelegramOptions {
  if (opts === null || typeof opts !== 'object') throw new TypeError('fastify-gatehouse: telegram options must be an object')
  if (typeof opts.token !== 'string' || !/^\d+:[A-Za-z0-9_-]+$/.test(opts.token)) throw bad('token', 'must be a bot token like "123456:ABC-DEF..."')
  const apiUrl = opts.apiUrl ?? 'https://api.telegram.org'
  let u: URL
  try { u = new URL(apiUrl) } catch { throw bad('apiUrl', 'must be an http(s) address') }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw bad('apiUrl', 'must be an http(s) address')
  const pollMs = duration('pollTimeout', opts.pollTimeout, 30_000)
  if (pollMs > 50_000) throw bad('pollTimeout', 'must be at most 50 seconds')
  return {
    token: opts.token,
    name: text('name', opts.name, 'telegram'),
    apiUrl,
    successMsg: text('successMsg', opts.successMsg, '✅ You are signed in. Go back to the site to continue.'),
    errorMsg: text('errorMsg', opts.errorMsg, '❌ This login link is invalid or has expired. Start again from the site.'),
    requestTtlMs: duration('requestTtl', opts.requestTtl, 10 * 60_000),
    pollTimeoutSec: Math.max(1, Math.round(pollMs / 1000)),
    requestTimeoutMs: duration('requestTimeout', opts.requestTimeout, 10_000),
    retryDelayMs: duration('retryDelay', opts.retryDelay, 3_000),
    polling: flag('polling', opts.polling, true),
    avatar: flag('avatar', opts.avatar, true),
    stateStore: opts.stateStore
  }
}

function text (option: string, v: unknown, dflt: string): string {
  if (v === undefined) return dflt
  if (typeof v !== 'string' || v === '') throw bad(option, 'must be a non-empty string')
  return v
}

function flag (option: string, v: unknown, dflt: boolean): boolean {
  if (v === undefined) return dflt
  if (typeof v !== 'boolean') throw bad(option, 'must be a boolean')
  return v
}

function duration (option: string, v: unknown, dflt: number): number {
  if (v === undefined) return dflt
  const ms = parseDuration(v as Duration)
  if (ms === undefined) throw bad(option, 'must be a positive duration (ms or like "30s")')
  return ms
}
