/**
 * Names `fastify-gatehouse/toolkit` exported before 1.0 that now live in `fastify-gatehouse/compat` (go-pkgz/rest's
 * helpers, expvar, from/to) or in no entry (one plugin's internals): each keeps working until 1.0 and warns once
 * when used (lib/deprecation.ts; the list is docs/guide/upgrading.md).
 */
import { deprecatedFunction, deprecatedObject, warnMoved } from '../../lib/deprecation.js'
import * as rest from './helpers.js'
import * as expvar from './metrics.js'
import * as fromTo from './from-to.js'
import { appInfoHeaders as appInfo } from './app-info.js'
import { deprecationHeaders as deprecation } from './deprecation.js'
import { isPing as ping } from './ping.js'
import { runChecks as checks } from './health.js'
import { etagMatches as etag } from './cache-control.js'
import { containsBlackWord as blackWord } from './black-words.js'

const COMPAT = 'fastify-gatehouse/compat'
const toCompat = <F extends (...args: never[]) => unknown>(name: string, fn: F): F => deprecatedFunction(() => { warnMoved(name, COMPAT) }, fn)
const internal = <F extends (...args: never[]) => unknown>(name: string, fn: F, instead: string): F => deprecatedFunction(() => { warnMoved(name, null, instead) }, fn)

/** @deprecated Import it from `fastify-gatehouse/compat` (go-pkgz/rest's `Wrap`; route options take hooks as they are); goes from the toolkit in 1.0. */
export const wrap = toCompat('wrap', rest.wrap)
/** @deprecated Import it from `fastify-gatehouse/compat` (go-pkgz/rest; Fastify's `reply.send` does it); goes from the toolkit in 1.0. */
export const renderJSON = toCompat('renderJSON', rest.renderJSON)
/** @deprecated Import it from `fastify-gatehouse/compat` (go-pkgz/rest); goes from the toolkit in 1.0. */
export const renderJSONFromBytes = toCompat('renderJSONFromBytes', rest.renderJSONFromBytes)
/** @deprecated Import it from `fastify-gatehouse/compat` (go-pkgz/rest); goes from the toolkit in 1.0. */
export const renderJSONWithHTML = toCompat('renderJSONWithHTML', rest.renderJSONWithHTML)
/** @deprecated Import it from `fastify-gatehouse/compat` (go-pkgz/rest); goes from the toolkit in 1.0. */
export const encodeJSON = toCompat('encodeJSON', rest.encodeJSON)
/** @deprecated Import it from `fastify-gatehouse/compat` (go-pkgz/rest; route schemas validate bodies); goes from the toolkit in 1.0. */
export const decodeJSON = toCompat('decodeJSON', rest.decodeJSON)
/** @deprecated Import it from `fastify-gatehouse/compat` (go-pkgz/rest; use `sendError`); goes from the toolkit in 1.0. */
export const sendErrorJSON = toCompat('sendErrorJSON', rest.sendErrorJSON)
/** @deprecated Import it from `fastify-gatehouse/compat` (go-pkgz/rest); goes from the toolkit in 1.0. */
export const errorLogger = toCompat('errorLogger', rest.errorLogger)
/** @deprecated Import it from `fastify-gatehouse/compat` (expvar; the metrics plugin's `vars` option); goes from the toolkit in 1.0. */
export const publish = toCompat('publish', expvar.publish)
/** @deprecated Import it from `fastify-gatehouse/compat` (expvar); goes from the toolkit in 1.0. */
export const expvarSnapshot = toCompat('expvarSnapshot', expvar.expvarSnapshot)
/** @deprecated Import it from `fastify-gatehouse/compat` (expvar); goes from the toolkit in 1.0. */
export const VarRegistry: typeof expvar.VarRegistry = deprecatedObject(() => { warnMoved('VarRegistry', COMPAT) }, expvar.VarRegistry)
/** @deprecated Import it from `fastify-gatehouse/compat` (expvar); goes from the toolkit in 1.0. */
export type VarRegistry = expvar.VarRegistry
/** @deprecated Import it from `fastify-gatehouse/compat` (go-pkgz/rest); goes from the toolkit in 1.0. */
export const parseFromTo = toCompat('parseFromTo', fromTo.parseFromTo)
/** @deprecated Import it from `fastify-gatehouse/compat` (go-pkgz/rest); goes from the toolkit in 1.0. */
export const parseTimestamp = toCompat('parseTimestamp', fromTo.parseTimestamp)

/** @deprecated Internal from 1.0 (the appInfo plugin or hook sets them); goes in 1.0. */
export const appInfoHeaders = internal('appInfoHeaders', appInfo, 'the appInfo plugin or hook sets the headers')
/** @deprecated Internal from 1.0 (the deprecation plugin or hook sets them); goes in 1.0. */
export const deprecationHeaders = internal('deprecationHeaders', deprecation, 'the deprecation plugin or hook sets the headers')
/** @deprecated Internal from 1.0 (the ping plugin answers); goes in 1.0. */
export const isPing = internal('isPing', ping, 'the ping plugin or hook answers')
/** @deprecated Internal from 1.0 (the health plugin runs them); goes in 1.0. */
export const runChecks = internal('runChecks', checks, 'the health plugin runs the checks')
/** @deprecated Internal from 1.0 (the cacheControl plugin answers 304); goes in 1.0. */
export const etagMatches = internal('etagMatches', etag, 'the cacheControl plugin answers 304')
/** @deprecated Internal from 1.0 (the blackWords plugin or hook refuses); goes in 1.0. */
export const containsBlackWord = internal('containsBlackWord', blackWord, 'the blackWords plugin or hook refuses the request')
