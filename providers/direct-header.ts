/**
 * The response header of the direct provider's breached-password warning, in a module of its own so that the
 * entries export it without loading the provider.
 */

/** The header that flags a sign-in with a breached password (`onBreached: 'warn'`). */
export const BREACHED_PASSWORD_HEADER = 'gatehouse-password-breached'
