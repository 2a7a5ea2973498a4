/**
 * node-saml's `SAML`, configured for one IdP and one request. Built per request (its construction only copies
 * options), so the one cache it asks about request IDs answers from the request's own signed login state: a
 * response's `InResponseTo` matches the login this browser started, never one kept in a shared table.
 */
import type { CacheProvider, SAML } from '@node-saml/node-saml'
import type { SamlDriver } from './driver.js'
import type { ResolvedIdp } from './metadata.js'
import type { ResolvedSaml } from './options.js'

/** The request ID this request may answer, and when it was issued. */
export interface Expected { id: string; issuedAt: number }

/**
 * The settings whose defaults would be unsafe or in the way, each set on purpose:
 * - `wantAssertionsSigned`: the assertion itself must carry a valid signature by the IdP's key (a signed Response
 *   around an unsigned assertion is not enough), encrypted ones included;
 * - `audience`: the SP's entity id (node-saml checks the `AudienceRestriction`);
 * - `validateInResponseTo`: `always` for a login the SP started (a response without `InResponseTo` is refused:
 *   IdP-initiated), `ifPresent` only with `allowIdpInitiated` and no login state;
 * - `acceptedClockSkewMs`: `clockSkew` (node-saml's default is none);
 * - `idpIssuer`: the IdP's entity id (checked by node-saml on logout messages; by `checkResponse` on logins);
 * - `signatureAlgorithm`/`digestAlgorithm`: SHA-256 for what the SP signs (node-saml's default is SHA-1).
 */
export function samlClient (driver: SamlDriver, o: ResolvedSaml, idp: ResolvedIdp, expected: Expected | undefined, id?: string): SAML {
  const cache: CacheProvider = {
    saveAsync: async () => null,
    getAsync: async (key) => expected !== undefined && key === expected.id ? new Date(expected.issuedAt).toISOString() : null,
    removeAsync: async () => null
  }
  return new driver.SAML({
    callbackUrl: o.acsUrl,
    issuer: o.entityId,
    audience: o.entityId,
    idpCert: idp.certs,
    idpIssuer: idp.entityId,
    entryPoint: idp.ssoUrl,
    logoutUrl: idp.sloUrl ?? idp.ssoUrl,
    logoutCallbackUrl: o.sloUrl,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: expected === undefined && o.allowIdpInitiated ? 'ifPresent' as never : 'always' as never,
    requestIdExpirationPeriodMs: o.loginTtlMs,
    cacheProvider: cache,
    acceptedClockSkewMs: o.clockSkewMs,
    identifierFormat: o.nameIdFormat ?? null,
    disableRequestedAuthnContext: true,
    ...(o.privateKey === undefined ? {} : { privateKey: o.privateKey, decryptionPvk: o.privateKey, publicCert: o.cert }),
    signatureAlgorithm: 'sha256',
    digestAlgorithm: 'sha256',
    ...(id === undefined ? {} : { generateUniqueId: () => id })
  })
}
