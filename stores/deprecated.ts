/**
 * Names `fastify-gatehouse/stores` exported before 1.0 that leave its public API: the three store errors (one
 * `StoreError` with `family` now) and the guards and helpers the openers use. Each keeps working until 1.0 and
 * warns once when used (lib/deprecation.ts; the list is docs/guide/upgrading.md). `AVATAR_ID_RE`, a RegExp,
 * cannot warn: it carries the `@deprecated` mark only.
 */
import { deprecatedFunction, deprecatedObject, warnMoved } from '../lib/deprecation.js'
import { StateStoreError as StateError } from '../lib/state-store.js'
import { PasskeyStoreError as PasskeyError, isPasskeyStore as isPasskey } from './passkey/types.js'
import { TotpStoreError as TotpError, isTotpStore as isTotp } from './totp/types.js'
import { isStateStore as isState } from './state/resolve.js'
import { contentIdOf as contentId, isAvatarId as isAvatar, isAvatarStore as isAvatarStoreOf } from './types.js'

const storeError = (name: string) => () => { warnMoved(name, null, 'catch StoreError (its family says which store)') }
const guard = (name: string) => () => { warnMoved(name, null, 'the openers check what they are given') }

/** @deprecated Use `StoreError` (`family: 'state'`); goes in 1.0. */
export const StateStoreError: typeof StateError = deprecatedObject(storeError('StateStoreError'), StateError)
/** @deprecated Use `StoreError` (`family: 'state'`); goes in 1.0. */
export type StateStoreError = StateError
/** @deprecated Use `StoreError` (`family: 'passkey'`); goes in 1.0. */
export const PasskeyStoreError: typeof PasskeyError = deprecatedObject(storeError('PasskeyStoreError'), PasskeyError)
/** @deprecated Use `StoreError` (`family: 'passkey'`); goes in 1.0. */
export type PasskeyStoreError = PasskeyError
/** @deprecated Use `StoreError` (`family: 'totp'`); goes in 1.0. */
export const TotpStoreError: typeof TotpError = deprecatedObject(storeError('TotpStoreError'), TotpError)
/** @deprecated Use `StoreError` (`family: 'totp'`); goes in 1.0. */
export type TotpStoreError = TotpError

/** @deprecated Internal from 1.0 (`openStateStore` checks what it is given); goes in 1.0. */
export const isStateStore: typeof isState = deprecatedFunction(guard('isStateStore'), isState)
/** @deprecated Internal from 1.0 (`openPasskeyStore` checks what it is given); goes in 1.0. */
export const isPasskeyStore: typeof isPasskey = deprecatedFunction(guard('isPasskeyStore'), isPasskey)
/** @deprecated Internal from 1.0 (`openTotpStore` checks what it is given); goes in 1.0. */
export const isTotpStore: typeof isTotp = deprecatedFunction(guard('isTotpStore'), isTotp)
/** @deprecated Internal from 1.0 (`openAvatarStore` checks what it is given); goes in 1.0. */
export const isAvatarStore: typeof isAvatarStoreOf = deprecatedFunction(guard('isAvatarStore'), isAvatarStoreOf)
/** @deprecated Internal from 1.0 (the avatar proxy names avatars); goes in 1.0. */
export const isAvatarId: typeof isAvatar = deprecatedFunction(() => { warnMoved('isAvatarId', null, 'the avatar proxy names avatars') }, isAvatar)
/** @deprecated Internal from 1.0 (the avatar proxy names avatars); goes in 1.0. */
export const contentIdOf: typeof contentId = deprecatedFunction(() => { warnMoved('contentIdOf', null, 'the avatar proxy names avatars') }, contentId)
