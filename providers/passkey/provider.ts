/**
 * Passkeys (WebAuthn) as a plugin (`gatehouse-passkey`), on @simplewebauthn/server:
 *
 * - `POST {authPrefix}/<name>/register/options`, `POST …/register`: a signed-in user adds a passkey;
 * - `GET …/credentials`, `DELETE …/credentials/:id`: lists and deletes the user's passkeys;
 * - `POST …/reauth/options`: a challenge for the signed-in user's passkey, whose answer (`passkey` in the body)
 *   re-authenticates a change of factors and confirms a factor for step-up (reauth.ts);
 * - `POST …/login/options`, `POST …/login`: signs in with a passkey (discoverable or with a user name), ending
 *   in the usual session through the provider kit's `completeLogin`;
 * - opt-in second factor for named direct providers (`secondFactor`): a right password of a user who has a
 *   passkey yields a pending login, and only the passkey issues the session.
 *
 * `app.register(passkeyProvider, { store: 'redis://…', secondFactor: ['local'] })` after the auth core.
 * @simplewebauthn/server is loaded when the plugin is registered, not when the package is imported.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { importDriver } from '../../lib/optional-driver.js'
import { providerLabel } from '../../lib/options.js'
import { builtinKit } from '../../plugins/core/kit.js'
import { openPasskeyStore } from '../../stores/passkey/index.js'
import { ceremonies } from './ceremony.js'
import type { PasskeyContext, WebAuthn } from './context.js'
import { loginOptions, verifyLogin } from './login.js'
import { resolvePasskeyOptions, type PasskeyProviderOptions } from './options.js'
import { pendingLogins } from './pending.js'
import { registrationRoutes } from './register.js'
import { passkeyAgain, reauthRoutes } from './reauth.js'

/** Passkey responses and options are small; anything larger is not one. */
const BODY_LIMIT = 64 * 1024

async function passkey (fastify: FastifyInstance, opts: PasskeyProviderOptions): Promise<void> {
  const kit = builtinKit(fastify, 'passkey')
  const o = resolvePasskeyOptions(opts, kit.url, (text) => { kit.logger.logf('[WARN] %s', text) })
  const label = providerLabel('passkey', o.name)
  const log: PasskeyContext['log'] = (level, format, ...args) => kit.logger.logf(`[${level}] passkey ${o.name}: ${format}`, ...args)
  // Before any store is opened: without the package there is nothing to close.
  const webauthn = await importDriver<WebAuthn>('@simplewebauthn/server', { option: label, feature: 'passkeys' })
  const state = await kit.openStateStore(o.stateStore, `${label}.stateStore`)
  const { store: passkeys, owned } = openPasskeyStore(o.store, `${label}.store`, (err) => log('WARN', 'passkey store: %s', err.message))
  if (owned) fastify.addHook('onClose', async () => { await passkeys.close() })
  const ctx: PasskeyContext = {
    auth: kit.api,
    kit,
    audit: kit.audit,
    state,
    o,
    webauthn,
    passkeys,
    ceremonies: ceremonies(kit, o.name, state, o.challengeTtlMs),
    pending: pendingLogins(kit, o.name, o.pendingTtlMs, state, passkeys),
    log
  }

  // The passkey's answer (`/login`) finishes the ceremony `/login/options` began (and was counted for); options
  // asked with a pending password login go on with that login and its audience.
  kit.mount({ name: o.name, login: verifyLogin(ctx) }, {
    loginSteps: { options: { handler: loginOptions(ctx), continuesLogin: ctx.pending.carries } },
    countsAsLogin: () => false,
    continuesLogin: () => true
  })
  kit.routes(o.name, (scope) => {
    registrationRoutes(scope, ctx)
    reauthRoutes(scope, ctx)
  }, { bodyLimit: BODY_LIMIT })
  kit.reauth.register('passkey', passkeyAgain(ctx))

  kit.secondFactors.requireOf(fastify, o.secondFactor, 'passkey', ctx.pending.factor, `${label}.secondFactor`)
}

/** Passkey sign-in, passkey management and the passkey second factor (`gatehouse-passkey`). */
export const passkeyProvider = fp(passkey, { name: 'gatehouse-passkey', fastify: '5.x' })
