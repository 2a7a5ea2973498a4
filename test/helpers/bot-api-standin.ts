/**
 * Test stand-in of the Telegram Bot API on 127.0.0.1, following https://core.telegram.org/bots/api:
 * `/bot<token>/<method>` with JSON or query parameters, answers `{ok, result}` / `{ok:false, error_code,
 * description}`; getUpdates long-polls (held until an update arrives or `timeout` seconds pass), confirms
 * updates below `offset`, and answers 409 to an older poll when a newer one arrives; files are served from
 * `/file/bot<token>/<file_path>`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { EventEmitter, once } from 'node:events'
import type { TgUpdate, TgUser } from '../../providers/telegram/bot-api.js'

export const BOT_TOKEN = '123456:TEST-token_abcdefghijklmnop'
export const BOT_USERNAME = 'gatehouse_test_bot'

interface Poll { res: ServerResponse; offset: number; timer: NodeJS.Timeout }
export interface SentMessage { chat_id: number; text: string }

export class BotApiStandIn extends EventEmitter {
  port = 0
  readonly sent: SentMessage[] = []
  /** Every method called, in order (getUpdates included). */
  readonly calls: string[] = []
  /** Profile photos per user id: one photo in three sizes, the file bytes by file_path. */
  readonly photos = new Map<number, Buffer>()
  /** Methods that fail with this HTTP status and Telegram error body until cleared. */
  readonly failing = new Map<string, number>()
  /** Methods answered by an HTML error page (as a proxy in front of the API might). */
  readonly garbled = new Set<string>()
  /**
   * Methods (or `file` for downloads) answered with hostile behaviour: `trickle` (200 headers, then a byte
   * every 200 ms for ever) or `huge` (a JSON-looking body of 64 MiB, written as it is read).
   */
  readonly hostile = new Map<string, 'trickle' | 'huge'>()
  /** Hostile answers whose connection is still open. */
  hostileOpen = 0
  private updates: TgUpdate[] = []
  private nextUpdateId = 500
  private poll: Poll | undefined
  private server: Server | undefined

  get url (): string { return `http://127.0.0.1:${this.port}` }

  async start (): Promise<void> {
    const server = createServer((req, res) => { this.route(req, res).catch(() => { res.statusCode = 500; res.end() }) })
    this.server = server
    server.listen(this.port, '127.0.0.1')
    await once(server, 'listening')
    this.port = (server.address() as { port: number }).port
  }

  async stop (): Promise<void> {
    if (this.poll !== undefined) { clearTimeout(this.poll.timer); this.poll = undefined }
    const s = this.server
    this.server = undefined
    if (s === undefined) return
    s.closeAllConnections()
    await new Promise<void>((resolve) => s.close(() => resolve()))
  }

  /** A user sends `text` to the bot in a private chat (e.g. pressing start: `/start <token>`). */
  say (user: TgUser, text: string, chatType = 'private'): number {
    const id = this.nextUpdateId++
    this.updates.push({
      update_id: id,
      message: { message_id: id, from: user, chat: { id: chatType === 'private' ? user.id : -1000 - user.id, type: chatType }, date: Math.floor(Date.now() / 1000), text }
    })
    this.deliver()
    return id
  }

  /** The next sendMessage call. */
  async nextMessage (): Promise<SentMessage> {
    const [m] = await once(this, 'message') as [SentMessage]
    return m
  }

  /** Resolves when a getUpdates poll is waiting (now or later). */
  async polling (): Promise<void> {
    if (this.poll !== undefined) return
    await once(this, 'poll')
  }

  /** Whether a getUpdates poll is being held open. */
  get waiting (): boolean { return this.poll !== undefined }

  private async route (req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url)
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname)
    if (file !== null) {
      this.calls.push('file')
      const h = this.hostile.get('file')
      if (h !== undefined) return this.misbehave(res, h)
      if (file[1] !== BOT_TOKEN) return this.json(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' })
      const uid = Number(/^photos\/(\d+)\.png$/.exec(file[2]!)?.[1])
      const bytes = this.photos.get(uid)
      if (bytes === undefined) return this.json(res, 404, { ok: false, error_code: 404, description: 'Not Found' })
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length })
      res.end(bytes)
      return
    }
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname)
    if (m === null) return this.json(res, 404, { ok: false, error_code: 404, description: 'Not Found' })
    if (m[1] !== BOT_TOKEN) return this.json(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' })
    const method = m[2]!
    this.calls.push(method)
    this.emit('call', method)
    const params: Record<string, unknown> = Object.fromEntries(url.searchParams)
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    if (chunks.length > 0 && (req.headers['content-type'] ?? '').startsWith('application/json')) Object.assign(params, JSON.parse(Buffer.concat(chunks).toString()))
    const h = this.hostile.get(method)
    if (h !== undefined) return this.misbehave(res, h)
    if (this.garbled.has(method)) {
      res.writeHead(502, { 'content-type': 'text/html' })
      res.end('<html><body>Bad Gateway</body></html>')
      return
    }
    const failure = this.failing.get(method)
    if (failure !== undefined) return this.json(res, failure, { ok: false, error_code: failure, description: `Stand-in failure of ${method}` })
    switch (method) {
      case 'getMe': return this.ok(res, { id: 1000, is_bot: true, first_name: 'Gatehouse Test', username: BOT_USERNAME })
      case 'getUpdates': return this.getUpdates(req, res, params)
      case 'sendMessage': {
        const msg = { chat_id: Number(params.chat_id), text: String(params.text) }
        this.sent.push(msg)
        this.ok(res, { message_id: this.sent.length, chat: { id: msg.chat_id, type: 'private' }, date: Math.floor(Date.now() / 1000), text: msg.text })
        this.emit('message', msg)
        return
      }
      case 'getUserProfilePhotos': {
        const uid = Number(params.user_id)
        if (!this.photos.has(uid)) return this.ok(res, { total_count: 0, photos: [] })
        const size = (w: number) => ({ file_id: `photo-${uid}-${w}`, file_unique_id: `u${uid}${w}`, width: w, height: w, file_size: 100 })
        return this.ok(res, { total_count: 1, photos: [[size(160), size(320), size(640), size(1280)]] })
      }
      case 'getFile': {
        const fm = /^photo-(\d+)-(\d+)$/.exec(String(params.file_id))
        if (fm === null) return this.json(res, 400, { ok: false, error_code: 400, description: 'Bad Request: invalid file_id' })
        this.emit('getFile', Number(fm[2]))
        return this.ok(res, { file_id: params.file_id, file_unique_id: 'x', file_size: this.photos.get(Number(fm[1]))?.length ?? 0, file_path: `photos/${fm[1]}.png` })
      }
      default: return this.json(res, 404, { ok: false, error_code: 404, description: 'Not Found: method not found' })
    }
  }

  private getUpdates (req: IncomingMessage, res: ServerResponse, params: Record<string, unknown>): void {
    const offset = Number(params.offset ?? 0)
    // An offset confirms every update before it: they are never delivered again.
    this.updates = this.updates.filter((u) => u.update_id >= offset)
    if (this.poll !== undefined) {
      const old = this.poll
      this.poll = undefined
      clearTimeout(old.timer)
      this.json(old.res, 409, { ok: false, error_code: 409, description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running' })
    }
    if (this.updates.length > 0) return this.ok(res, this.updates)
    const timeout = Math.min(Number(params.timeout ?? 0), 50)
    const poll: Poll = { res, offset, timer: setTimeout(() => { if (this.poll === poll) { this.poll = undefined; this.ok(res, []) } }, timeout * 1000) }
    this.poll = poll
    res.once('close', () => {
      if (this.poll === poll) { this.poll = undefined; clearTimeout(poll.timer); this.emit('abandoned') }
    })
    this.emit('poll')
  }

  private deliver (): void {
    const poll = this.poll
    if (poll === undefined) return
    this.poll = undefined
    clearTimeout(poll.timer)
    this.ok(poll.res, this.updates.filter((u) => u.update_id >= poll.offset))
  }

  private misbehave (res: ServerResponse, kind: 'trickle' | 'huge'): void {
    this.hostileOpen++
    res.once('close', () => { this.hostileOpen--; this.emit('hostile-closed') })
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"ok":true,"result":')
    if (kind === 'trickle') {
      const timer = setInterval(() => res.write(' '), 200)
      res.once('close', () => clearInterval(timer))
      return
    }
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    let left = 1024
    const pump = (): void => {
      while (left-- > 0) if (!res.write(chunk)) { res.once('drain', pump); return }
      res.end('}')
    }
    res.once('close', () => { left = 0 })
    pump()
  }

  private ok (res: ServerResponse, result: unknown): void { this.json(res, 200, { ok: true, result }) }

  private json (res: ServerResponse, status: number, body: unknown): void {
    if (res.writableEnded) return
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
}
