/**
 * Authenticator-app codes (TOTP, RFC 6238) and recovery codes as a plugin (`gatehouse-totp`), on otpauth (the
 * code arithmetic) and qrcode (the enrolment's QR code, as SVG):
 *
 * - `GET {authPrefix}/<name>/status`, `POST …/enrol`, `POST …/enrol/confirm` (enrol.ts), `POST …/verify`,
 *   `POST …/recovery-codes`, `DELETE …/`: a signed-in user's authenticator app (routes.ts);
 * - `POST …/login` `{code}` or `{recoveryCode}`: the second step of a password login, for the direct providers
 *   named in `secondFactor` (login.ts, pending.ts).
 *
 * `app.register(totpProvider, { encryptionKey, store: 'redis://…', secondFactor: ['local'] })` after the auth core.
 * The drivers are loaded when the plugin is registered, not when the package is imported.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { OptionsError } from '../../lib/errors.js'
import { checkDrivers, importDriver } from '../../lib/optional-driver.js'
import { providerLabel } from '../../lib/options.js'
import { builtinKit } from '../../plugins/core/kit.js'
import { openTotpStore } from '../../stores/totp/index.js'
import type { OtpAuth } from './codes.js'
import type { CountingStateStore, QrCode, TotpContext } from './context.js'
import { totpLogin } from './login.js'
import { resolveTotpOptions, type TotpProviderOptions } from './options.js'
import { pendingLogins } from './pending.js'
import { managementRoutes } from './routes.js'
import { checkKey, sealer } from './seal.js'

/** Codes and small JSON bodies only (a passkey assertion that re-authenticates a change is the largest). */
const BODY_LIMIT = 16 * 1024

async function totp (fastify: FastifyInstance, opts: TotpProviderOptions): Promise<void> {
  const kit = builtinKit(fastify, 'totp')
  const o = resolveTotpOptions(opts, kit.url, (text) => { kit.logger.logf('[WARN] %s', text) })
  const label = providerLabel('totp', o.name)
  const log: TotpContext['log'] = (level, format, ...args) => kit.logger.logf(`[${level}] totp ${o.name}: ${format}`, ...args)
  // Before any store is opened: without the packages there is nothing to close. Every missing one is named at once.
  const use = { option: label, feature: o.qrCode ? 'authenticator-app codes and their enrolment QR code (qrCode: false needs no qrcode)' : 'authenticator-app codes' }
  checkDrivers(o.qrCode ? ['otpauth', 'qrcode'] : ['otpauth'], use)
  const qrcode = o.qrCode ? await importDriver<QrCode>('qrcode', use) : undefined
  const otp = await importDriver<OtpAuth>('otpauth', use)
  const state = await kit.openStateStore(o.stateStore, `${label}.stateStore`)
  // The cap of wrong codes counts there, whether or not the core's rateLimit does.
  if (typeof state.increment !== 'function') throw new OptionsError(`${label}.stateStore`, 'needs increment(key, ttlMs, opts): the cap of wrong codes counts in it')
  const { store, owned } = openTotpStore(o.store, `${label}.store`, (err) => log('WARN', 'totp store: %s', err.message))
  if (owned) fastify.addHook('onClose', async () => { await store.close() })
  const ctx: TotpContext = {
    auth: kit.api, kit, audit: kit.audit, o, otp, qrcode: (qrcode as { default?: QrCode | undefined } | undefined)?.default ?? qrcode, store, state: state as CountingStateStore, sealer: sealer(o.key), log
  }
  // A wrong key stops the start; the store opened for it is closed (onClose hooks do not run for a failed start).
  await checkKey(store, ctx.sealer, `${label}.encryptionKey`).catch(async (err: unknown) => {
    if (owned) await store.close()
    throw err
  })
  const pending = pendingLogins(ctx)

  // Counted as a login request (rateLimit.login) like a password post; the audience was kept by the password step.
  kit.mount({ name: o.name, login: totpLogin(ctx, pending) }, { continuesLogin: () => true })
  kit.routes(o.name, (scope) => { managementRoutes(scope, ctx) }, { bodyLimit: BODY_LIMIT })

  kit.secondFactors.requireOf(fastify, o.secondFactor, 'totp', pending.factor, `${label}.secondFactor`)
}

/** Authenticator-app codes and recovery codes: second factor, step-up and management (`gatehouse-totp`). */
export const totpProvider = fp(totp, { name: 'gatehouse-totp', fastify: '5.x' })
