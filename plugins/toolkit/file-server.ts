/**
 * fileServer: static files from one directory, over @fastify/static (which resolves every path inside `root`
 * and refuses `..` escapes). Hardened defaults: no directory listing (a directory without an index file is a
 * 404), dotfiles (`.env`, `.git/`) are 404, and no `reply.sendFile` decorator, so several file servers can
 * live side by side.
 *
 * Encapsulated on purpose (`encapsulate: true`): mount it where you want it with Fastify's own `prefix`,
 * `fastify.register(fileServerPlugin, { root: './public', prefix: '/static' })`. Misses go to the 404 handler of
 * the context it is registered in.
 */
import fp from 'fastify-plugin'
import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { FastifyPluginAsync } from 'fastify'
import { OptionsError } from '../../lib/errors.js'
import { importDriver } from '../../lib/optional-driver.js'

export interface FileServerOptions {
  /** Directory to serve (must exist). */
  root: string
  /** Index file served for a directory, or false for none. Default `index.html`. */
  index?: string | false | undefined
  /** `Cache-Control` max-age in milliseconds (or an `ms` string such as `1d`). Default 0. */
  maxAge?: number | string | undefined
  /** Route prefix, applied by Fastify's `register` (documented here so TypeScript accepts it). */
  prefix?: string | undefined
}

const fileServerPluginImpl: FastifyPluginAsync<FileServerOptions> = async (fastify, opts) => {
  if (opts === null || typeof opts !== 'object' || typeof opts.root !== 'string' || opts.root === '') {
    throw new OptionsError('fileServer.root', 'must be a directory path')
  }
  const root = resolve(opts.root)
  let isDir = false
  try { isDir = statSync(root).isDirectory() } catch { isDir = false }
  if (!isDir) throw new OptionsError('fileServer.root', `"${root}" is not a directory`)
  const index = opts.index ?? 'index.html'
  if (index !== false && (typeof index !== 'string' || index === '' || /[\\/]/.test(index))) {
    throw new OptionsError('fileServer.index', 'must be a file name or false')
  }
  // Loaded when a file server is registered, not when the toolkit is imported; an optional package.
  const serveStatic = await importDriver<typeof import('@fastify/static')>('@fastify/static', { option: 'fileServer', feature: 'serving files' })
  await fastify.register(serveStatic.default, {
    root,
    prefix: '/',
    list: false,
    index: index === false ? false : [index],
    dotfiles: 'ignore',
    decorateReply: false,
    redirect: false,
    maxAge: opts.maxAge ?? 0
  })
}

/** `fastify.register(fileServerPlugin, { root, prefix: '/static' })`. */
export const fileServerPlugin = fp(fileServerPluginImpl, { name: 'gatehouse-file-server', fastify: '5.x', encapsulate: true })
