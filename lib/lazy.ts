/**
 * Loading heavy optional dependencies (ioredis, lmdb, mongodb, sharp, nodemailer, argon2) only when a configured
 * feature needs them, so that importing the package stays as cheap as importing Fastify. Where the caller is
 * async, `import()` is used; classes with synchronous constructors load through `require`, at construction time.
 */
import { createRequire } from 'node:module'
import type Sharp from 'sharp'

const require = createRequire(import.meta.url)

/** Loads a CommonJS dependency synchronously, on first use. */
export function requireLazy<T> (name: string): T {
  return require(name) as T
}

/** sharp, loaded on the first image operation (avatars, identicons, the dev server's pictures). */
export function sharpLazy (): typeof Sharp {
  return requireLazy<typeof Sharp>('sharp')
}
