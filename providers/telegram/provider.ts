/**
 * Telegram-bot login as a plugin (`telegramProvider`):
 *
 * 1. `GET /<name>/login` → `{bot, token}`; the browser that asked gets a signed handshake cookie naming the
 *    token, and the pending request goes into the state store.
 * 2. The user opens `https://t.me/<bot>?start=<token>` and presses start; the background poller sees
 *    `/start <token>`, marks the request confirmed with the Telegram user, and answers SuccessMsg (or
 *    ErrorMsg for an unknown or expired token).
 * 3. `GET /<name>/login?token=<token>` → 404 until then; afterwards, for the browser holding the handshake
 *    cookie only, the session cookie and the user (avatar taken through getUserProfilePhotos/getFile).
 *
 * Pending requests live in the shared state store, so any instance can answer any step; one instance
 * (`polling: true`) is enough to poll the bot.
 */
import { randomBytes } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ErrorCodes, HttpError } from '../../lib/errors.js'
import { safeEqual } from '../../lib/compare.js'
import { userId } from '../../lib/user.js'
import type { StateStore } from '../../lib/state-store/types.js'
import { readLoginRequest } from '../../lib/login-request.js'
import { mountProvider, providerStateStore } from '../../plugins/core/mount.js'
import type { AuthProvider, GatehouseAuth } from '../../plugins/core/types.js'
import { TelegramBotApi, type TgUpdate, type TgUser } from './bot-api.js'
import { Deadline } from '../../lib/http/deadline.js'
import { UpdatePoller } from './poller.js'
import { resolveTelegramOptions, type ResolvedTelegramOptions, type TelegramOptions } from './options.js'

/** A pending (`p`) or confirmed (`c`) login request, as stored. `exp`: ms timestamp. */
interface LoginRecord { s: 'p' | 'c'; exp: number; aud?: string; from?: string; sess: boolean; uid?: number; name?: string }

// Telegram deep-link start parameters allow A-Z a-z 0-9 _ - up to 64 characters.
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{16,64}$/
const START = /^\/start(?:@[A-Za-z0-9_]+)?(?:\s+([^]*))?$/
const MAX_AVATAR_BYTES = 5 * 1024 * 1024
// Time left to collect the session after a late start press.
const MIN_CONFIRMED_MS = 60_000

async function telegram (fastify: FastifyInstance, opts: TelegramOptions): Promise<void> {
  const o = resolveTelegramOptions(opts)
  const store = await providerStateStore(fastify, o.stateStore, 'telegram.stateStore')
  const { provider, poller, bot, log } = createTelegramProvider(fastify.auth, o, store)
  mountProvider(fastify, provider)
  if (poller !== undefined) {
    fastify.addHook('onReady', async () => {
      bot().catch((err: Error) => log('WARN', 'getMe failed: %s', err.message))
      poller.start()
    })
    fastify.addHook('onClose', async () => { await poller.stop() })
  }
}

/** Telegram-bot login (`gatehouse-telegram`); polling starts when Fastify is ready and stops on close. */
export const telegramProvider = fp(telegram, { name: 'gatehouse-telegram', fastify: '5.x', dependencies: ['gatehouse-core'] })

interface TelegramParts {
  provider: AuthProvider
  /** The update poller, when this instance polls. */
  poller: UpdatePoller | undefined
  /** The bot's username (asked once). */
  bot: () => Promise<string>
  log: (level: 'INFO' | 'WARN', format: string, ...args: unknown[]) => void
}

/** The provider object and its background parts (started by the plugin). */
function createTelegramProvider (auth: GatehouseAuth, o: ResolvedTelegramOptions, store: StateStore): TelegramParts {
  const name = o.name
  const api = new TelegramBotApi({ token: o.token, apiUrl: o.apiUrl, requestTimeoutMs: o.requestTimeoutMs })
  const cookieName = `gatehouse-tg-${name}`
  const cookiePath = `${auth.options.authPrefix}/${name}`
  // Set and cleared with the same attributes, so the clearing header is never the weaker one.
  const cookieAttrs = { path: cookiePath, httpOnly: true, sameSite: auth.options.cookies.sameSite, secure: auth.options.cookies.secure }
  const keyOf = (token: string): string => `tg:${name}:${token}`
  const log = (level: 'INFO' | 'WARN', format: string, ...args: unknown[]): void => auth.logger.logf(`[${level}] telegram ${name}: ${format}`, ...args)

  let botName: string | undefined
  let asking: Promise<string> | undefined
  /** The bot's username from getMe, asked once and kept. */
  async function bot (): Promise<string> {
    if (botName !== undefined) return botName
    asking ??= api.getMe().then((me) => {
      if (typeof me?.username !== 'string' || me.username === '') throw new Error('getMe: the bot has no username')
      botName = me.username
      return botName
    }).finally(() => { asking = undefined })
    return await asking
  }

  async function ask (request: FastifyRequest, reply: FastifyReply, query: Record<string, unknown>): Promise<unknown> {
    // Each request stores a pending login: counted per address (rateLimit.login), and the entry per client.
    await auth.throttle.loginRequest(request)
    const login = readLoginRequest(query)
    const aud = login.aud
    auth.checkAudience(aud)
    const from = auth.safeRedirect(login.from)
    let username: string
    try { username = await bot() } catch (err) {
      // The Bot API's own text stays in the log: a client learns only which peer failed.
      log('WARN', 'getMe failed: %s', (err as Error).message)
      throw new HttpError(503, 'telegram unavailable', 'the Telegram Bot API did not answer usably; try again later')
    }
    const token = randomBytes(18).toString('base64url')
    const record: LoginRecord = { s: 'p', exp: Date.now() + o.requestTtlMs, sess: login.sessionOnly }
    if (aud !== undefined) record.aud = aud
    if (from !== undefined) record.from = from
    if (!(await store.setIfAbsent(keyOf(token), JSON.stringify(record), o.requestTtlMs, { client: auth.throttle.clientKey(request) }))) {
      throw new HttpError(503, 'telegram unavailable', 'could not allocate a login token')
    }
    // Binds the token to this browser: only the holder of this cookie can collect the session.
    // The browser binding outlives the request by the grace a late start press gets (MIN_CONFIRMED_MS), so that
    // such a login can still be collected; the request itself expires at requestTtl, checked at the press.
    const bindingMs = o.requestTtlMs + MIN_CONFIRMED_MS
    const handshake = await auth.tokens.signPurpose('handshake', { prov: name, tg: token }, bindingMs, aud)
    reply.setCookie(cookieName, handshake, { ...cookieAttrs, maxAge: Math.ceil(bindingMs / 1000) })
    log('INFO', 'login requested')
    return { bot: username, token }
  }

  async function collect (request: FastifyRequest, reply: FastifyReply, token: unknown): Promise<unknown> {
    if (typeof token !== 'string' || !TOKEN_SHAPE.test(token)) throw new HttpError(400, 'bad request', 'malformed login token')
    await checkBrowser(request, token)
    const key = keyOf(token)
    const record = parseRecord(await store.get(key))
    if (record === undefined) throw new HttpError(404, 'not found', 'unknown or expired login request')
    if (record.s !== 'c') throw new HttpError(404, 'not found', 'waiting for the user to press start in the bot chat')
    const raw = await store.take(key)
    const taken = parseRecord(raw)
    if (taken?.s !== 'c' || taken.uid === undefined) throw new HttpError(404, 'not found', 'login request already used')
    const tgId = String(taken.uid)
    const avatar = auth.avatar !== null && o.avatar ? await avatarBytes(taken.uid) : undefined
    try {
      reply.clearCookie(cookieName, cookieAttrs)
      return await auth.completeLogin(request, reply, {
        user: { name: taken.name ?? 'telegram user', id: userId(name, tgId) },
        aud: taken.aud,
        from: taken.from,
        sessionOnly: taken.sess,
        avatar: avatar === undefined ? undefined : { bytes: avatar }
      })
    } catch (err) {
      // No session was issued: put the confirmed request back so the browser can try again.
      await store.set(key, raw!, Math.max(taken.exp - Date.now(), MIN_CONFIRMED_MS), { client: auth.throttle.clientKey(request) }).catch(() => {})
      throw err
    }
  }

  async function checkBrowser (request: FastifyRequest, token: string): Promise<void> {
    const notThisBrowser = (): HttpError => new HttpError(403, 'forbidden', 'this login token was not issued to this browser', ErrorCodes.HANDSHAKE)
    const cookie = request.cookies?.[cookieName]
    if (typeof cookie !== 'string' || cookie === '') throw notThisBrowser()
    let claims
    try {
      claims = await auth.tokens.verifyPurpose('handshake', cookie)
    } catch (err) {
      if (err instanceof HttpError && err.code === ErrorCodes.TOKEN_EXPIRED) throw new HttpError(404, 'not found', 'login request expired')
      throw notThisBrowser()
    }
    if (claims.prov !== name || typeof claims.tg !== 'string' || !safeEqual(claims.tg, token)) throw notThisBrowser()
  }

  async function avatarBytes (uid: number): Promise<Uint8Array | undefined> {
    // The three calls share one deadline: the photo may cost the login `requestTimeout` at most, not three.
    const deadline = new Deadline(o.requestTimeoutMs)
    try {
      const photos = await api.getUserProfilePhotos(uid, 1, deadline.signal)
      const sizes = photos?.photos?.[0]
      if (!Array.isArray(sizes) || sizes.length === 0) return undefined
      // The largest size that is still avatar-sized; Telegram lists sizes small to large.
      const fitting = sizes.filter((s) => Math.max(s.width, s.height) <= 640)
      const pick = fitting.length > 0 ? fitting[fitting.length - 1]! : sizes[0]!
      const file = await api.getFile(pick.file_id, deadline.signal)
      if (typeof file?.file_path !== 'string') return undefined
      return await api.downloadFile(file.file_path, MAX_AVATAR_BYTES, deadline.signal)
    } catch (err) {
      log('WARN', 'avatar not taken: %s', (err as Error).message)
      return undefined
    } finally {
      deadline.clear()
    }
  }

  /** One update from the poller: a `/start <token>` in a private chat confirms that login request. */
  async function onUpdate (update: TgUpdate): Promise<void> {
    const msg = update.message
    if (msg === undefined || typeof msg.text !== 'string' || msg.chat?.type !== 'private') return
    const from = msg.from
    if (from === undefined || from.is_bot === true || typeof from.id !== 'number') return
    const m = START.exec(msg.text.trim())
    if (m === null) return
    const token = m[1]?.trim()
    if (token === undefined || !TOKEN_SHAPE.test(token)) return await answer(msg.chat.id, o.errorMsg)
    const key = keyOf(token)
    const record = parseRecord(await store.get(key))
    const left = record === undefined ? 0 : record.exp - Date.now()
    if (record?.s !== 'p' || left <= 0) {
      log('INFO', 'start with an unknown, used or expired token')
      return await answer(msg.chat.id, o.errorMsg)
    }
    const confirmed: LoginRecord = { ...record, s: 'c', uid: from.id, name: displayName(from) }
    await store.set(key, JSON.stringify(confirmed), Math.max(left, MIN_CONFIRMED_MS))
    log('INFO', 'login confirmed by telegram user %s', userId(name, String(from.id)))
    await answer(msg.chat.id, o.successMsg)
  }

  async function answer (chatId: number, text: string): Promise<void> {
    try { await api.sendMessage(chatId, text) } catch (err) { log('WARN', 'reply not sent: %s', (err as Error).message) }
  }

  const poller = o.polling
    ? new UpdatePoller(api, onUpdate, { pollTimeoutSec: o.pollTimeoutSec, retryDelayMs: o.retryDelayMs }, auth.logger, name)
    : undefined
  const provider: AuthProvider = {
    name,
    async login (request, reply) {
      const query = (request.query ?? {}) as Record<string, unknown>
      if (query.token !== undefined) return await collect(request, reply, query.token)
      return await ask(request, reply, query)
    }
  }
  return { provider, poller, bot, log }
}

function parseRecord (raw: string | undefined): LoginRecord | undefined {
  if (raw === undefined) return undefined
  try {
    const r = JSON.parse(raw) as LoginRecord
    return r !== null && typeof r === 'object' && (r.s === 'p' || r.s === 'c') && typeof r.exp === 'number' ? r : undefined
  } catch {
    return undefined
  }
}

/** First and last name as Telegram shows them; the username when there is no name. */
function displayName (u: TgUser): string {
  const full = [u.first_name, u.last_name].filter((s) => typeof s === 'string' && s.trim() !== '').join(' ').trim()
  const name = full !== '' ? full : typeof u.username === 'string' && u.username !== '' ? u.username : `telegram user ${u.id}`
  return name.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, 128)
}
