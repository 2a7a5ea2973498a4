/**
 * Names `fastify-gatehouse/providers` (and the root entry, which re-exported this one whole) had before 1.0 and
 * that now live in another entry or nowhere public: each keeps working until 1.0 and warns once when used
 * (lib/deprecation.ts). The names and their new places: docs/guide/upgrading.md.
 */
import { deprecatedFunction, deprecatedObject, warnMoved } from '../lib/deprecation.js'
import { RESERVED_PROVIDER_NAMES as reservedNames } from './oauth2/builtins.js'
import { isMailAddress as isMail, senderFunc as adaptSender } from './email/sender.js'
import * as lazy from './lazy.js'

/**
 * Names no custom provider may take (the built-ins', `apple`, `telegram`, `dev`).
 * @deprecated Internal from 1.0 (a reserved name is refused at registration with an OptionsError naming it).
 */
export const RESERVED_PROVIDER_NAMES: readonly string[] = deprecatedObject(() => { warnMoved('RESERVED_PROVIDER_NAMES', null) }, reservedNames)

/**
 * True for one bare mail address: the e-mail provider's default `isAddress` rule.
 * @deprecated Internal from 1.0 (it is the default of the e-mail provider's `isAddress` option).
 */
export const isMailAddress: typeof isMail = deprecatedFunction(() => { warnMoved('isMailAddress', null) }, isMail)

/**
 * Adapts a function to the `Sender` interface (a function is taken as a sender as it is).
 * @deprecated Import it from `fastify-gatehouse/compat`; goes from here in 1.0.
 */
export const senderFunc: typeof adaptSender = deprecatedFunction(() => { warnMoved('senderFunc', 'fastify-gatehouse/compat') }, adaptSender)

const toRoot = (name: string) => () => { warnMoved(name, 'fastify-gatehouse') }
// The provider plugins are registered from the root entry; this entry keeps them until 1.0, warning once at the
// first registration (Fastify reads the plugin's metadata then).
/** @deprecated Register it from the root entry: `import { directProvider } from 'fastify-gatehouse'`; goes from here in 1.0. */
export const directProvider: typeof lazy.directProvider = deprecatedObject(toRoot('directProvider'), lazy.directProvider)
/** @deprecated Register it from the root entry: `import { oauth2Provider } from 'fastify-gatehouse'`; goes from here in 1.0. */
export const oauth2Provider: typeof lazy.oauth2Provider = deprecatedObject(toRoot('oauth2Provider'), lazy.oauth2Provider)
/** @deprecated Register it from the root entry: `import { oidcProvider } from 'fastify-gatehouse'`; goes from here in 1.0. */
export const oidcProvider: typeof lazy.oidcProvider = deprecatedObject(toRoot('oidcProvider'), lazy.oidcProvider)
/** @deprecated Register it from the root entry: `import { appleProvider } from 'fastify-gatehouse'`; goes from here in 1.0. */
export const appleProvider: typeof lazy.appleProvider = deprecatedObject(toRoot('appleProvider'), lazy.appleProvider)
/** @deprecated Register it from the root entry: `import { devProvider } from 'fastify-gatehouse'`; goes from here in 1.0. */
export const devProvider: typeof lazy.devProvider = deprecatedObject(toRoot('devProvider'), lazy.devProvider)
/** @deprecated Register it from the root entry: `import { telegramProvider } from 'fastify-gatehouse'`; goes from here in 1.0. */
export const telegramProvider: typeof lazy.telegramProvider = deprecatedObject(toRoot('telegramProvider'), lazy.telegramProvider)
/** @deprecated Register it from the root entry: `import { passkeyProvider } from 'fastify-gatehouse'`; goes from here in 1.0. */
export const passkeyProvider: typeof lazy.passkeyProvider = deprecatedObject(toRoot('passkeyProvider'), lazy.passkeyProvider)
/** @deprecated Register it from the root entry: `import { totpProvider } from 'fastify-gatehouse'`; goes from here in 1.0. */
export const totpProvider: typeof lazy.totpProvider = deprecatedObject(toRoot('totpProvider'), lazy.totpProvider)
