/**
 * appInfo: identifies the application on every response with `App-Name`, `App-Version`, `Org` and, when the
 * environment variable `MHOST` is set, `M-Host` (the machine or container that answered).
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { OptionsError } from '../../lib/errors.js'
import type { ToolkitHook } from './hook.js'

export interface AppInfoOptions {
  /** `App-Name` header value. Required. */
  name: string
  /** `App-Version` header value. Required. */
  version: string
  /** `Org` header value; omitted when not given. */
  org?: string | undefined
  /** `M-Host` header value; default: the `MHOST` environment variable, read once at registration. */
  mhost?: string | undefined
}

/** Validates the options once and returns the header pairs to set. */
export function appInfoHeaders (opts: AppInfoOptions): Array<[string, string]> {
  if (opts === null || typeof opts !== 'object') throw new OptionsError('appInfo', 'must be an object')
  const pairs: Array<[string, string]> = [
    ['App-Name', headerValue('appInfo.name', opts.name, true) as string],
    ['App-Version', headerValue('appInfo.version', opts.version, true) as string]
  ]
  const org = headerValue('appInfo.org', opts.org, false)
  if (org !== undefined) pairs.push(['Org', org])
  const mhost = headerValue('appInfo.mhost', opts.mhost ?? process.env.MHOST, false)
  if (mhost !== undefined && mhost !== '') pairs.push(['M-Host', mhost])
  return pairs
}

/** Route-level form: `onRequest: appInfoHook({ name, version })`. */
export function appInfoHook (opts: AppInfoOptions): ToolkitHook {
  const pairs = appInfoHeaders(opts)
  return async function appInfoHook (_request, reply) {
    for (const [k, v] of pairs) reply.header(k, v)
  }
}

/** fastify-plugin: the headers belong on every response of the context it is registered in. */
const appInfoPluginImpl: FastifyPluginAsync<AppInfoOptions> = async (fastify, opts) => {
  const pairs = appInfoHeaders(opts)
  fastify.addHook('onRequest', (_request: FastifyRequest, reply: FastifyReply, next: () => void) => {
    for (let i = 0; i < pairs.length; i++) reply.header((pairs[i] as [string, string])[0], (pairs[i] as [string, string])[1])
    next()
  })
}

export const appInfoPlugin = fp(appInfoPluginImpl, { name: 'gatehouse-app-info', fastify: '5.x' })

function headerValue (name: string, value: unknown, required: boolean): string | undefined {
  if (value === undefined && !required) return undefined
  if (typeof value !== 'string' || (required && value === '')) throw new OptionsError(name, 'must be a non-empty string')
  // A header value with control characters would be refused by Node at the first response: refuse it now.
  if (/[^\t\x20-\x7e\x80-\xff]/.test(value)) throw new OptionsError(name, 'must not contain control characters')
  return value
}
