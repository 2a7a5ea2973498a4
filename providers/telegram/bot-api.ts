/**
 * A small client of the Telegram Bot API (https://core.telegram.org/bots/api): requests are
 * `POST {apiUrl}/bot<token>/<method>` with a JSON body; answers are `{ok: true, result}` or
 * `{ok: false, error_code, description, parameters?: {retry_after}}`. Files are downloaded from
 * `{apiUrl}/file/bot<token>/<file_path>`. The bot token is part of every URL, so no URL ever goes into an
 * error message or a log line: errors name the method only.
 */
import { ErrorCodes, GatehouseError } from '../../lib/errors.js'
import { Deadline, outboundRequest, OutboundError } from '../../lib/http/request.js'

/** https://core.telegram.org/bots/api#user */
export interface TgUser { id: number; is_bot?: boolean | undefined; first_name: string; last_name?: string | undefined; username?: string | undefined }
/** https://core.telegram.org/bots/api#chat */
export interface TgChat { id: number; type: string }
/** https://core.telegram.org/bots/api#message (the fields used here) */
export interface TgMessage { message_id: number; from?: TgUser | undefined; chat: TgChat; date: number; text?: string | undefined }
/** https://core.telegram.org/bots/api#update (the fields used here) */
export interface TgUpdate { update_id: number; message?: TgMessage | undefined }
/** https://core.telegram.org/bots/api#photosize */
export interface TgPhotoSize { file_id: string; file_unique_id: string; width: number; height: number; file_size?: number | undefined }
/** https://core.telegram.org/bots/api#userprofilephotos */
export interface TgUserProfilePhotos { total_count: number; photos: TgPhotoSize[][] }
/** https://core.telegram.org/bots/api#file */
export interface TgFile { file_id: string; file_unique_id: string; file_size?: number | undefined; file_path?: string | undefined }

/** A failed Bot API call. `retryAfter` (seconds) is set when Telegram asks to slow down (429). */
export class TelegramApiError extends GatehouseError {
  readonly errorCode: number | undefined
  readonly retryAfter: number | undefined
  constructor (message: string, errorCode?: number, retryAfter?: number, cause?: unknown) {
    super(message, ErrorCodes.UPSTREAM, cause === undefined ? undefined : { cause })
    this.name = 'TelegramApiError'
    this.errorCode = errorCode
    this.retryAfter = retryAfter
  }
}

export interface BotApiConfig {
  token: string
  apiUrl: string
  /** Deadline of ordinary calls and downloads, ms (a long poll gets its hold time on top). */
  requestTimeoutMs: number
}

/**
 * Largest JSON answer read. getUpdates returns at most 100 updates, each a message of at most 4096 characters
 * plus its metadata: well under this.
 */
const MAX_ANSWER_BYTES = 4 << 20

type ApiBody = { ok?: unknown; result?: unknown; error_code?: unknown; description?: unknown; parameters?: { retry_after?: unknown } | undefined }

export class TelegramBotApi {
  private readonly base: string

  constructor (private readonly cfg: BotApiConfig) {
    this.base = cfg.apiUrl.replace(/\/+$/, '')
  }

  getMe (): Promise<TgUser> { return this.call('getMe', {}) }

  /**
   * Long poll: Telegram holds the request up to `timeoutSec` seconds when there is nothing to deliver.
   * `signal` stops it at once (the socket is destroyed) when the poller stops.
   */
  getUpdates (offset: number, timeoutSec: number, signal: AbortSignal): Promise<TgUpdate[]> {
    return this.call('getUpdates', { offset, timeout: timeoutSec, allowed_updates: ['message'] }, { signal, extraMs: timeoutSec * 1000 })
  }

  sendMessage (chatId: number, text: string): Promise<TgMessage> {
    return this.call('sendMessage', { chat_id: chatId, text })
  }

  /** `signal` (here and below): an outer deadline or stop, on top of each call's own deadline. */
  getUserProfilePhotos (userId: number, limit = 1, signal?: AbortSignal): Promise<TgUserProfilePhotos> {
    return this.call('getUserProfilePhotos', { user_id: userId, limit }, { signal })
  }

  getFile (fileId: string, signal?: AbortSignal): Promise<TgFile> { return this.call('getFile', { file_id: fileId }, { signal }) }

  /** Downloads a file found by getFile; refuses more than `maxBytes` (on the wire and decompressed). */
  async downloadFile (filePath: string, maxBytes: number, signal?: AbortSignal): Promise<Uint8Array> {
    if (!/^[A-Za-z0-9_./-]+$/.test(filePath) || filePath.includes('..')) throw new TelegramApiError('download: unexpected file path')
    const res = await this.request(`${this.base}/file/bot${this.cfg.token}/${filePath}`, { method: 'GET' }, 'download', maxBytes, { signal })
    if (res.status !== 200) throw new TelegramApiError(`download: HTTP ${res.status}`, res.status)
    return res.body
  }

  private async call<T> (method: string, params: Record<string, unknown>, opts: { signal?: AbortSignal | undefined; extraMs?: number | undefined } = {}): Promise<T> {
    const res = await this.request(`${this.base}/bot${this.cfg.token}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(params)
    }, method, MAX_ANSWER_BYTES, opts)
    let body: ApiBody
    try {
      body = JSON.parse(res.body.toString('utf8')) as ApiBody
    } catch {
      throw new TelegramApiError(`${method}: HTTP ${res.status}, answer is not JSON`, res.status)
    }
    if (body?.ok !== true) {
      const code = typeof body?.error_code === 'number' ? body.error_code : res.status
      const description = typeof body?.description === 'string' ? body.description.slice(0, 200).replace(/[^\x20-\x7e]/g, '?') : `HTTP ${res.status}`
      const retry = body?.parameters?.retry_after
      throw new TelegramApiError(`${method}: ${description}`, code, typeof retry === 'number' ? retry : undefined)
    }
    return body.result as T
  }

  /**
   * One Bot API request under its own deadline (lib/http: a timer that destroys the socket, a byte cap).
   * Errors name the method only: the URL holds the bot token.
   */
  private async request (
    url: string, req: { method: 'GET' | 'POST'; headers?: Record<string, string> | undefined; body?: string | undefined }, what: string, maxBytes: number,
    opts: { signal?: AbortSignal | undefined; extraMs?: number | undefined } = {}
  ): Promise<{ status: number; body: Buffer }> {
    const deadline = new Deadline(this.cfg.requestTimeoutMs + (opts.extraMs ?? 0), opts.signal)
    try {
      // The path holds the bot token: the span shows the method only.
      const tracePath = what === 'download' ? '/file/botREDACTED/REDACTED' : `/botREDACTED/${what}`
      const ans = await outboundRequest(new URL(url), { ...req, deadline, maxBytes, span: 'gatehouse.telegram.bot_api', tracePath })
      return { status: ans.status, body: ans.body }
    } catch (err) {
      const reason = err instanceof OutboundError ? err.reason : 'unreachable'
      if (reason === 'aborted') throw err // stopped by the caller, who knows why
      if (reason === 'too-large') throw new TelegramApiError(`${what}: ${what === 'download' ? 'file' : 'answer'} larger than ${maxBytes} bytes`, undefined, undefined, err)
      const why = reason === 'timeout' ? 'timed out' : (err as Error).message
      throw new TelegramApiError(`${what}: Bot API unreachable (${why})`, undefined, undefined, err)
    } finally {
      deadline.clear()
    }
  }
}
