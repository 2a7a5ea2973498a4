/**
 * Passkeys (WebAuthn) as a plugin (`gatehouse-passkey`), on @simplewebauthn/server:
 *
 * - `POST {authPrefix}/<name>/register/options`, `POST …/register`: a signed-in user adds a passkey;
 * - `GET …/credentials`, `DELETE …/credentials/:id`: lists and deletes the user's passkeys;
 * - `POST …/login/options`, `POST …/login`: signs in with a passkey (discoverable or with a user name), ending
 *   in the usual session through `fastify.auth.completeLogin`;
 * - opt-in second factor for named direct providers (`secondFactor`): a right password of a user who has a
 *   passkey yields a pending login, and only the passkey issues the session.
 *
 * `app.register(passkeyProvider, { store: 'redis://…', secondFactor: ['local'] })` after the auth core.
 * @simplewebauthn/server is loaded when the plugin is registered, not when the package is imported.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { OptionsError } from '../../lib/errors.js'
import { importDriver } from '../../lib/optional-driver.js'
import { requireSecondFactor, takesSecondFactor } from '../../lib/second-factor.js'
import { applyAuthScope } from '../../plugins/core/scope.js'
import { mountProvider, providerStateStore } from '../../plugins/core/mount.js'
import { openPasskeyStore } from '../../stores/passkey/index.js'
import { ceremonies } from './ceremony.js'
import type { PasskeyContext, WebAuthn } from './context.js'
import { loginOptionsRoute, verifyLogin } from './login.js'
import { resolvePasskeyOptions, type PasskeyProviderOptions } from './options.js'
import { pendingLogins } from './pending.js'
import { registrationRoutes } from './register.js'

/** Passkey responses and options are small; anything larger is not one. */
const BODY_LIMIT = 64 * 1024

async function passkey (fastify: FastifyInstance, opts: PasskeyProviderOptions): Promise<void> {
  const auth = fastify.auth
  const o = resolvePasskeyOptions(opts, auth.options.url)
  const label = `passkey.${o.name}`
  const log: PasskeyContext['log'] = (level, format, ...args) => auth.logger.logf(`[${level}] passkey ${o.name}: ${format}`, ...args)
  // Before any store is opened: without the package there is nothing to close.
  const webauthn = await importDriver<WebAuthn>('@simplewebauthn/server', { option: label, feature: 'passkeys' })
  const state = await providerStateStore(fastify, o.stateStore, `${label}.stateStore`)
  const { store: passkeys, owned } = openPasskeyStore(o.store, `${label}.store`, (err) => log('WARN', 'passkey store: %s', err.message))
  if (owned) fastify.addHook('onClose', async () => { await passkeys.close() })
  const ctx: PasskeyContext = {
    auth,
    o,
    webauthn,
    passkeys,
    ceremonies: ceremonies(auth, o.name, state, o.challengeTtlMs),
    pending: pendingLogins(auth, o.name, o.pendingTtlMs, state, passkeys),
    log
  }

  mountProvider(fastify, { name: o.name, login: verifyLogin(ctx) })
  fastify.register(async (scope) => {
    applyAuthScope(scope, auth.logger)
    scope.addHook('onRoute', (route) => { route.bodyLimit = BODY_LIMIT })
    loginOptionsRoute(scope, ctx)
    registrationRoutes(scope, ctx)
  }, { prefix: `${auth.options.authPrefix}/${o.name}` })

  for (const provider of o.secondFactor) requireSecondFactor(auth, provider, ctx.pending.factor, `${label}.secondFactor`)
  // Every provider named must be mounted by now and take a second factor: a typo must not leave logins with one.
  fastify.addHook('onReady', async () => {
    for (const provider of o.secondFactor) {
      if (!takesSecondFactor(auth, provider)) throw new OptionsError(`${label}.secondFactor`, `names "${provider}", which is not a direct provider of this app`)
    }
  })
}

/** Passkey sign-in, passkey management and the passkey second factor (`gatehouse-passkey`). */
export const passkeyProvider = fp(passkey, { name: 'gatehouse-passkey', fastify: '5.x', dependencies: ['gatehouse-core'] })
