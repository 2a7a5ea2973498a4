/**
 * The dev server's default port, in a module of its own: the one value behind both names (`DEV_SERVER_PORT`, and
 * the providers' `DEV_PORT` before it), importable without the server.
 */

/** Default port of the dev OAuth2 server (the `dev` provider starts it there). */
export const DEV_SERVER_PORT = 8084

/**
 * The dev server's default port under the providers' name for it.
 * @deprecated Use `DEV_SERVER_PORT` (`fastify-gatehouse/servers`), the one name of this value; goes in 1.0.
 */
export const DEV_PORT = DEV_SERVER_PORT
