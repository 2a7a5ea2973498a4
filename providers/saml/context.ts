/** What the routes of one SAML provider share. */
import type { FastifyRequest } from 'fastify'
import type { BuiltinKit } from '../../plugins/core/kit.js'
import type { SamlDriver } from './driver.js'
import type { IdpDirectory } from './directory.js'
import type { LoginStateCookie } from './login-state.js'
import type { ResolvedSaml } from './options.js'

export interface SamlContext {
  kit: BuiltinKit
  o: ResolvedSaml
  driver: SamlDriver
  directory: IdpDirectory
  state: LoginStateCookie
}

/** A page navigation of the browser (Fetch Metadata), which is sent on with a redirect rather than answered with JSON. */
export function isNavigation (request: FastifyRequest): boolean {
  return request.headers['sec-fetch-mode'] === 'navigate'
}
