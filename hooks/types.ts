/**
 * What the hooks need from whoever builds them (the core plugin): types of their own, so that the hooks depend on
 * nothing of the core's internals.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { MaybePromise, User } from '../lib/user.js'

/**
 * Reads the user of a request (basic auth or a session), or null. Synchronous for a session served from the
 * verified-session cache, so that the hooks answer without waiting on anything. Throws HttpError for bad credentials.
 */
export interface ResolveUser {
  (request: FastifyRequest, reply: FastifyReply): User | null | Promise<User | null>
  /** The realm the hooks' 401 challenges name (`WWW-Authenticate: Bearer realm="…"`); default `fastify-gatehouse`. */
  readonly realm?: string | undefined
}

/** Replaces a request's user (the `updateUser` hook). */
export type UpdateUser = (user: User) => MaybePromise<User>

/** What the session-less XSRF hook compares: the header (`headerName`, lower case) with the XSRF cookie. */
export interface XsrfHookOptions {
  disable: boolean
  ignoreMethods: ReadonlySet<string>
  headerName: string
  /** The request's XSRF cookie (read from the Cookie header: the host need not have registered @fastify/cookie). */
  cookieOf: (request: FastifyRequest) => string | undefined
}

/**
 * The id (`jti`) of the session a request presents whose user is the one the hooks attached, or undefined (basic
 * auth, no session): what step-up confirmations are kept under.
 */
export type SessionIdOf = (request: FastifyRequest, reply: FastifyReply) => Promise<string | undefined>
