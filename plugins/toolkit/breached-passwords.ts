/**
 * The breached-password check in the toolkit (`fastify-gatehouse/toolkit`): for the app's own sign-up and
 * password-change pages, the same check the direct provider runs at sign-in. It lives in lib/breached-passwords.ts,
 * below both the toolkit and the providers (a provider may not import the toolkit).
 */
export { breachedPasswords, type BreachedPasswords, type BreachedPasswordsOptions, type BreachVerdict } from '../../lib/breached-passwords.js'
