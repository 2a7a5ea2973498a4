/**
 * The background long-polling loop: getUpdates with an offset (which confirms everything before it to
 * Telegram), one update at a time. An update whose handling fails because the state store is down is not
 * confirmed, so it comes back on the next poll and a user's start press survives a store outage.
 */
import { StateStoreError } from '../../lib/state-store.js'
import type { Logger } from '../../lib/logging/logger.js'
import { TelegramApiError, type TelegramBotApi, type TgUpdate } from './bot-api.js'

export interface PollerConfig {
  /** Seconds Telegram may hold one getUpdates request. */
  pollTimeoutSec: number
  /** Pause after a failed poll or a store outage, ms. */
  retryDelayMs: number
}

export class UpdatePoller {
  private offset = 0
  private abort: AbortController | undefined
  private loop: Promise<void> | undefined

  constructor (
    private readonly api: TelegramBotApi,
    private readonly handle: (update: TgUpdate) => Promise<void>,
    private readonly cfg: PollerConfig,
    private readonly logger: Logger,
    private readonly name: string
  ) {}

  start (): void {
    if (this.loop !== undefined) return
    const abort = new AbortController()
    this.abort = abort
    this.loop = this.run(abort.signal)
  }

  /** Aborts the poll in flight and waits for the loop to end. */
  async stop (): Promise<void> {
    this.abort?.abort()
    await this.loop
    this.loop = undefined
  }

  private async run (signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let updates: TgUpdate[]
      try {
        updates = await this.api.getUpdates(this.offset, this.cfg.pollTimeoutSec, signal)
        if (!Array.isArray(updates)) throw new TelegramApiError('getUpdates: result is not a list')
      } catch (err) {
        if (signal.aborted) return
        // 409: another getUpdates for this bot (another instance polling) took over; 429: slow down.
        const retryAfter = err instanceof TelegramApiError && err.retryAfter !== undefined ? err.retryAfter * 1000 : 0
        this.logger.logf('[WARN] telegram %s: %s', this.name, (err as Error).message)
        await pause(Math.max(this.cfg.retryDelayMs, retryAfter), signal)
        continue
      }
      for (const update of updates) {
        if (signal.aborted) return
        if (typeof update?.update_id !== 'number') continue
        if (update.update_id < this.offset) continue
        try {
          await this.handle(update)
        } catch (err) {
          if (err instanceof StateStoreError) {
            this.logger.logf('[WARN] telegram %s: update %d postponed: %s', this.name, update.update_id, err.details ?? err.message)
            await pause(this.cfg.retryDelayMs, signal)
            break
          }
          this.logger.logf('[WARN] telegram %s: update %d dropped: %s', this.name, update.update_id, (err as Error).message)
        }
        this.offset = update.update_id + 1
      }
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause (ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done (): void {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}
