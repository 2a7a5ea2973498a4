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
import type { StateStore } from '../../lib/state-store.js'
import type { LoginRequest } from '../../lib/login/login-request.js'
import { providerKit, type AuthProvider, type ProviderKit } from '../../plugins/core/kit.js'
import { TelegramBotApi, type TgUpdate, type TgUser } from './bot-api.js'
import { Deadline } from '../../lib/http/deadline.js'
import { UpdatePoller } from './poller.js'
import { resolveTelegramOptions, type ResolvedTelegramOptions, type TelegramProviderOptions } from './options.js'

/** A login request as stored: pending until the user pressed start, then confirmed by that Telegram user. */
interface LoginRecord {
  state: 'pending' | 'confirmed'
  /** When the request expires (ms timestamp). */
  exp: number
  aud?: string | undefined
  from?: string | undefined
  sessionOnly: boolean
  /** The Telegram user who pressed start. */
  telegramId?: number | undefined
  name?: string | undefined
}

// Telegram deep-link start parameters allow A-Z a-z 0-9 _ - up to 64 characters.
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{16,64}$/
const START = /^\/start(?:@[A-Za-z0-9_]+)?(?:\s+([^]*))?$/
const MAX_AVATAR_BYTES = 5 * 1024 * 1024
// Time left to collect the session after a late start press.
const MIN_CONFIRMED_MS = 60_000

async function telegram (fastify: FastifyInstance, opts: TelegramProviderOptions): Promise<void> {
  const kit = providerKit(fastify, 'telegram')
  const o = resolveTelegramOptions(opts, (text) => { kit.logger.logf('[WARN] %s', text) })
  const store = await kit.openStateStore(o.stateStore, 'telegram.stateStore')
  const { provider, poller, bot, log } = createTelegramProvider(kit, o, store)
  // Collecting the session (`?token=`) is the browser waiting for the start press, polled: not counted, and the
  // login's audience is in the pending request.
  const collecting = (request: FastifyRequest): boolean => (request.query as Record<string, unknown> | undefined)?.token !== undefined
  kit.mount(provider, { countsAsLogin: (request) => !collecting(request), continuesLogin: collecting })
  if (poller !== undefined) {
    fastify.addHook('onReady', async () => {
      bot().catch((err: Error) => log('WARN', 'getMe failed: %s', err.message))
      poller.start()
    })
    fastify.addHook('onClose', async () => { await poller.stop() })
  }
}

/** Telegram-bot login (`gatehouse-telegram`); polling starts when Fastify is ready and stops on close. */
export const telegramProvider = fp(telegram, { name: 'gatehouse-telegram', fastify: '5.x' })

interface TelegramParts {
  provider: AuthProvider
  /** The update poller, when this instance polls. */
  poller: UpdatePoller | undefined
  /** The bot's username (asked once). */
  bot: () => Promise<string>
  log: Log
}

type Log = (level: 'INFO' | 'WARN', format: string, ...args: unknown[]) => void

/** What the steps of one Telegram provider share. */
interface Telegram {
  kit: ProviderKit
  o: ResolvedTelegramOptions
  api: TelegramBotApi
  store: StateStore
  /** The browser-binding cookie; set and cleared with the same attributes, so the clearing header is never the weaker one. */
  cookie: { name: string; attrs: { path: string; httpOnly: true; sameSite: ProviderKit['cookies']['sameSite']; secure: boolean } }
  bot: () => Promise<string>
  log: Log
}

/** The provider object and its background parts (started by the plugin). */
function createTelegramProvider (kit: ProviderKit, o: ResolvedTelegramOptions, store: StateStore): TelegramParts {
  const name = o.name
  const api = new TelegramBotApi({ token: o.token, apiUrl: o.apiUrl, requestTimeoutMs: o.requestTimeoutMs })
  const log: Log = (level, format, ...args) => kit.logger.logf(`[${level}] telegram ${name}: ${format}`, ...args)
  const tg: Telegram = {
    kit,
    o,
    api,
    store,
    cookie: { name: `gatehouse-tg-${name}`, attrs: { path: `${kit.authPrefix}/${name}`, httpOnly: true, sameSite: kit.cookies.sameSite, secure: kit.cookies.secure } },
    bot: botName(api),
    log
  }
  const poller = o.polling
    ? new UpdatePoller(api, async (update) => await onUpdate(tg, update), { pollTimeoutSec: o.pollTimeoutSec, retryDelayMs: o.retryDelayMs }, kit.logger, name)
    : undefined
  const provider: AuthProvider = {
    name,
    async login (request, reply, login) {
      const query = (request.query ?? {}) as Record<string, unknown>
      if (query.token !== undefined) return await collect(tg, request, reply, query.token)
      return await ask(tg, request, reply, login)
    }
  }
  return { provider, poller, bot: tg.bot, log }
}

const keyOf = (tg: Telegram, token: string): string => `tg:${tg.o.name}:${token}`

/** The bot's username from getMe, asked once and kept. */
function botName (api: TelegramBotApi): () => Promise<string> {
  let known: string | undefined
  let asking: Promise<string> | undefined
  return async () => {
    if (known !== undefined) return known
    asking ??= api.getMe().then((me) => {
      if (typeof me?.username !== 'string' || me.username === '') throw new Error('getMe: the bot has no username')
      known = me.username
      return known
    }).finally(() => { asking = undefined })
    return await asking
  }
}

/** `/login`: a pending login request, bound to this browser by a cookie. The mount counted and checked the request. */
async function ask (tg: Telegram, request: FastifyRequest, reply: FastifyReply, login: LoginRequest): Promise<unknown> {
  const { o, store, kit } = tg
  let username: string
  try { username = await tg.bot() } catch (err) {
    // The Bot API's own text stays in the log: a client learns only which peer failed.
    tg.log('WARN', 'getMe failed: %s', (err as Error).message)
    throw new HttpError(503, 'telegram unavailable', 'the Telegram Bot API did not answer usably; try again later')
  }
  const token = randomBytes(18).toString('base64url')
  const record: LoginRecord = { state: 'pending', exp: Date.now() + o.requestTtlMs, sessionOnly: login.sessionOnly }
  if (login.aud !== undefined) record.aud = login.aud
  if (login.from !== undefined) record.from = login.from
  // The entry counts against this client's share of the store.
  if (!(await store.setIfAbsent(keyOf(tg, token), JSON.stringify(record), o.requestTtlMs, { client: kit.throttle.clientKey(request) }))) {
    throw new HttpError(503, 'telegram unavailable', 'could not allocate a login token')
  }
  // Binds the token to this browser: only the holder of this cookie can collect the session.
  // The browser binding outlives the request by the grace a late start press gets (MIN_CONFIRMED_MS), so that
  // such a login can still be collected; the request itself expires at requestTtl, checked at the press.
  const bindingMs = o.requestTtlMs + MIN_CONFIRMED_MS
  const handshake = await kit.loginState.sign({ provider: o.name, loginToken: token }, bindingMs, login.aud)
  reply.setCookie(tg.cookie.name, handshake, { ...tg.cookie.attrs, maxAge: Math.ceil(bindingMs / 1000) })
  tg.log('INFO', 'login requested')
  return { bot: username, token }
}

/** `/login?token=`: the session, once the user pressed start, for the browser that asked only. */
async function collect (tg: Telegram, request: FastifyRequest, reply: FastifyReply, token: unknown): Promise<unknown> {
  if (typeof token !== 'string' || !TOKEN_SHAPE.test(token)) throw new HttpError(400, 'bad request', 'malformed login token')
  await checkBrowser(tg, request, token)
  const { store, kit, o } = tg
  const key = keyOf(tg, token)
  const record = parseRecord(await store.get(key))
  if (record === undefined) throw new HttpError(404, 'not found', 'unknown or expired login request')
  if (record.state !== 'confirmed') throw new HttpError(404, 'not found', 'waiting for the user to press start in the bot chat')
  const raw = await store.take(key)
  const taken = parseRecord(raw)
  if (taken?.state !== 'confirmed' || taken.telegramId === undefined) throw new HttpError(404, 'not found', 'login request already used')
  const avatar = kit.savesAvatars && o.avatar ? await avatarBytes(tg, taken.telegramId) : undefined
  try {
    reply.clearCookie(tg.cookie.name, tg.cookie.attrs)
    return await kit.completeLogin(request, reply, {
      user: { name: taken.name ?? 'telegram user', id: userId(o.name, String(taken.telegramId)) },
      aud: taken.aud,
      from: taken.from,
      sessionOnly: taken.sessionOnly,
      avatar: avatar === undefined ? undefined : { bytes: avatar }
    })
  } catch (err) {
    // No session was issued: put the confirmed request back so the browser can try again.
    await store.set(key, raw!, Math.max(taken.exp - Date.now(), MIN_CONFIRMED_MS), { client: kit.throttle.clientKey(request) }).catch(() => {})
    throw err
  }
}

async function checkBrowser (tg: Telegram, request: FastifyRequest, token: string): Promise<void> {
  const notThisBrowser = (): HttpError => new HttpError(403, 'forbidden', 'this login token was not issued to this browser', ErrorCodes.HANDSHAKE)
  const cookie = request.cookies?.[tg.cookie.name]
  if (typeof cookie !== 'string' || cookie === '') throw notThisBrowser()
  let claims
  try {
    claims = await tg.kit.loginState.verify(cookie)
  } catch (err) {
    if (err instanceof HttpError && err.code === ErrorCodes.TOKEN_EXPIRED) throw new HttpError(404, 'not found', 'login request expired')
    throw notThisBrowser()
  }
  if (claims.provider !== tg.o.name || typeof claims.loginToken !== 'string' || !safeEqual(claims.loginToken, token)) throw notThisBrowser()
}

async function avatarBytes (tg: Telegram, uid: number): Promise<Uint8Array | undefined> {
  // The three calls share one deadline: the photo may cost the login `requestTimeout` at most, not three.
  const deadline = new Deadline(tg.o.requestTimeoutMs)
  try {
    const photos = await tg.api.getUserProfilePhotos(uid, 1, deadline.signal)
    const sizes = photos?.photos?.[0]
    if (!Array.isArray(sizes) || sizes.length === 0) return undefined
    // The largest size that is still avatar-sized; Telegram lists sizes small to large.
    const fitting = sizes.filter((s) => Math.max(s.width, s.height) <= 640)
    const pick = fitting.length > 0 ? fitting[fitting.length - 1]! : sizes[0]!
    const file = await tg.api.getFile(pick.file_id, deadline.signal)
    if (typeof file?.file_path !== 'string') return undefined
    return await tg.api.downloadFile(file.file_path, MAX_AVATAR_BYTES, deadline.signal)
  } catch (err) {
    tg.log('WARN', 'avatar not taken: %s', (err as Error).message)
    return undefined
  } finally {
    deadline.clear()
  }
}

/** One update from the poller: a `/start <token>` in a private chat confirms that login request. */
async function onUpdate (tg: Telegram, update: TgUpdate): Promise<void> {
  const msg = update.message
  if (msg === undefined || typeof msg.text !== 'string' || msg.chat?.type !== 'private') return
  const from = msg.from
  if (from === undefined || from.is_bot === true || typeof from.id !== 'number') return
  const m = START.exec(msg.text.trim())
  if (m === null) return
  const token = m[1]?.trim()
  if (token === undefined || !TOKEN_SHAPE.test(token)) return await answer(tg, msg.chat.id, tg.o.errorMsg)
  const key = keyOf(tg, token)
  const record = parseRecord(await tg.store.get(key))
  const left = record === undefined ? 0 : record.exp - Date.now()
  if (record?.state !== 'pending' || left <= 0) {
    tg.log('INFO', 'start with an unknown, used or expired token')
    return await answer(tg, msg.chat.id, tg.o.errorMsg)
  }
  const confirmed: LoginRecord = { ...record, state: 'confirmed', telegramId: from.id, name: displayName(from) }
  await tg.store.set(key, JSON.stringify(confirmed), Math.max(left, MIN_CONFIRMED_MS))
  tg.log('INFO', 'login confirmed by telegram user %s', userId(tg.o.name, String(from.id)))
  await answer(tg, msg.chat.id, tg.o.successMsg)
}

async function answer (tg: Telegram, chatId: number, text: string): Promise<void> {
  try { await tg.api.sendMessage(chatId, text) } catch (err) { tg.log('WARN', 'reply not sent: %s', (err as Error).message) }
}

function parseRecord (raw: string | undefined): LoginRecord | undefined {
  if (raw === undefined) return undefined
  try {
    const r = JSON.parse(raw) as LoginRecord
    return r !== null && typeof r === 'object' && (r.state === 'pending' || r.state === 'confirmed') && typeof r.exp === 'number' ? r : undefined
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
