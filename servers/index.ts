/**
 * `fastify-gatehouse/servers`: the embeddable OAuth2 authorization servers. The dev server (any user name
 * signs in; the `dev` provider starts one for you) and the local server, whose `providerOptions` register a
 * custom provider against it. They are servers, not providers: they never see the auth core.
 */
export { startDevServer, DEV_CLIENT, DEV_SERVER_PORT, type DevServerOptions, type RunningOAuth2Server } from './dev-server.js'
export { startLocalOAuth2Server, type LocalOAuth2ServerOptions } from './local-server.js'
export type { LocalMappedUser, LocalProviderOptions } from './provider-options.js'
export type { ClientCredentials, EmailFn } from './types.js'
export type { LocalUserInfo } from './token.js'
export { escapeHtml, type LoginPageContext, type LoginPageHandler } from './login-page.js'
export type { CommonServerOptions } from './options.js'
