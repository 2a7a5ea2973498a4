/**
 * The optional packages ("drivers") that only some features need. `npm i fastify fastify-gatehouse` installs
 * none of them: they are optional peer dependencies, loaded when a configured feature needs one. A missing one
 * stops the configuration (the store's constructor, the plugin's registration) with an OptionsError that names
 * the option, the feature and the `npm i` line, instead of failing the first request that would use it.
 */
import { createRequire } from 'node:module'
import { OptionsError } from './errors.js'

const require = createRequire(import.meta.url)

/**
 * Each driver and the range of it this version works with: the same ranges as `peerDependencies` in
 * package.json (a test keeps the two equal).
 */
export const OPTIONAL_DRIVERS = {
  ioredis: '^6.0.0',
  mongodb: '^7.9.0',
  lmdb: '^3.5.6',
  sharp: '^0.35.5',
  argon2: '^0.45.1',
  nodemailer: '^10.6.0',
  '@simplewebauthn/server': '^14.0.3',
  '@fastify/static': '^10.1.11',
  '@fastify/cors': '^11.4.3',
  helmet: '^8.3.0',
  otpauth: '^9.5.2',
  qrcode: '^1.5.4',
  '@opentelemetry/api': '^1.9.0',
  '@node-saml/node-saml': '^5.1.0'
} as const

export type DriverName = keyof typeof OPTIONAL_DRIVERS

/** Who needs a driver: the option the user set (`stateStore`) and the feature it asks for (`a Redis state store`). */
export interface DriverUse { option: string; feature: string }

/**
 * The command that installs a driver in the supported range, e.g. `npm i ioredis@6` or `npm i sharp@0.35`:
 * the caret range's fixed part, written without characters a shell would treat specially.
 */
export function installCommand (name: DriverName): string {
  return installAll([name])
}

/** One `npm i` line for several drivers: `npm i otpauth@9 qrcode@1`. */
export function installAll (names: readonly DriverName[]): string {
  return `npm i ${names.map(installSpec).join(' ')}`
}

/** `ioredis@6`, `sharp@0.35`: the package at the fixed part of its caret range. */
function installSpec (name: DriverName): string {
  const [major, minor] = OPTIONAL_DRIVERS[name].slice(1).split('.')
  return `${name}@${major === '0' ? `0.${minor}` : major}`
}

/**
 * Drivers that are not installed, or one that does not load (a native addon built for another platform). Several
 * are named together (`otpauth and qrcode`) with one `npm i` line, so a feature is set up with one command.
 */
export class DriverMissingError extends OptionsError {
  constructor (readonly driver: string, readonly feature: string, option: string, readonly install: string, cause?: unknown) {
    super(option, cause === undefined
      ? `needs ${driver} for ${feature}, and ${driver.includes(' and ') ? 'they are' : 'it is'} not installed: ${install}`
      : `needs ${driver} for ${feature}, and it failed to load (${(cause as Error)?.message ?? String(cause)}); reinstall it: ${install}`,
    cause === undefined ? undefined : { cause })
    this.name = 'OptionsError'
  }

  /** The same error for another option: a store's address given to a plugin option (`avatar.store`). */
  forOption (option: string): DriverMissingError {
    return new DriverMissingError(this.driver, this.feature, option, this.install, this.cause)
  }
}

/** Whether the driver is installed where this package can resolve it; nothing is loaded. */
export function hasDriver (name: DriverName): boolean {
  return resolves(name)
}

/** Throws a DriverMissingError for `use` unless the driver is installed; for features that load it later. */
export function checkDriver (name: DriverName, use: DriverUse): void {
  checkDrivers([name], use)
}

/**
 * For a feature that needs several drivers: one DriverMissingError naming every one of them that is not installed
 * (`needs otpauth and qrcode …: npm i otpauth@9 qrcode@1`), rather than one error per run; loads nothing.
 */
export function checkDrivers (names: readonly DriverName[], use: DriverUse): void {
  const missing = names.filter((name) => !resolves(name))
  if (missing.length === 0) return
  throw new DriverMissingError(missing.join(' and '), use.feature, use.option, installAll(missing))
}

/** Loads a CommonJS-loadable driver synchronously (for constructors), or throws a DriverMissingError for `use`. */
export function requireDriver<T> (name: DriverName, use: DriverUse): T {
  return loadSync<T>(name, use, installCommand(name))
}

/** Imports a driver (its ES module build), or rejects with a DriverMissingError for `use`. */
export async function importDriver<T> (name: DriverName, use: DriverUse): Promise<T> {
  return await loadAsync<T>(name, use, installCommand(name))
}

/*
 * The loaders for any package name: what the tests reach with names that resolve nowhere or modules that throw,
 * since every real driver is installed in the development tree.
 */

/** `require`s the package, or throws a DriverMissingError for `use`. */
export function loadSync<T> (name: string, use: DriverUse, install: string): T {
  checkResolves(name, use, install)
  try {
    return require(name) as T
  } catch (err) {
    throw new DriverMissingError(name, use.feature, use.option, install, err)
  }
}

/** `import()`s the package, or rejects with a DriverMissingError for `use`. */
export async function loadAsync<T> (name: string, use: DriverUse, install: string): Promise<T> {
  checkResolves(name, use, install)
  try {
    return await import(name) as T
  } catch (err) {
    throw new DriverMissingError(name, use.feature, use.option, install, err)
  }
}

function checkResolves (name: string, use: DriverUse, install: string): void {
  if (!resolves(name)) throw new DriverMissingError(name, use.feature, use.option, install)
}

/**
 * How a package name is found. Tests replace `resolve` to make an installed driver look missing; the package's
 * `exports` keep this module out of users' reach.
 */
export const driverResolution = { resolve: (name: string): string => require.resolve(name) }

function resolves (name: string): boolean {
  try {
    driverResolution.resolve(name)
    return true
  } catch (err) {
    // Only "not found" is missing: a package that is there but cannot be resolved for `require` (an ES-module-only
    // release, ERR_PACKAGE_PATH_NOT_EXPORTED) is loaded anyway, and says why if that fails.
    return (err as { code?: string | undefined })?.code !== 'MODULE_NOT_FOUND'
  }
}
