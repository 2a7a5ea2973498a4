/**
 * The optional drivers as package.json declares them and as lib/optional-driver.ts loads them. Every driver is
 * installed in the development tree, so the missing case is reached here through a name that resolves nowhere;
 * the real one (each driver absent from a user's node_modules) is in scratch-app.test.ts.
 */
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { OptionsError } from '../../lib/errors.js'
import { DriverMissingError, driverResolution, hasDriver, importDriver, installCommand, loadAsync, loadSync, OPTIONAL_DRIVERS, requireDriver, type DriverName } from '../../lib/optional-driver.js'

interface Manifest {
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
  peerDependencies: Record<string, string>
  peerDependenciesMeta: Record<string, { optional?: boolean }>
}
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Manifest
const names = Object.keys(OPTIONAL_DRIVERS) as DriverName[]

t.test('every driver is an optional peer dependency in the range the loader names, and a dev dependency', async (t) => {
  const { fastify, ...peers } = pkg.peerDependencies
  t.ok(fastify, 'fastify stays a required peer')
  t.same(peers, OPTIONAL_DRIVERS, 'the same packages and ranges')
  t.same(Object.keys(pkg.peerDependenciesMeta).sort(), [...names].sort())
  for (const name of names) {
    t.equal(pkg.peerDependenciesMeta[name]!.optional, true, `${name} is optional`)
    t.equal(pkg.devDependencies[name], OPTIONAL_DRIVERS[name], `${name} is installed for the tests`)
    t.notOk(Object.hasOwn(pkg.dependencies, name), `${name} is not a dependency`)
  }
})

t.test('the npm i line asks for the supported major (or 0.minor) without shell-special characters', async (t) => {
  t.equal(installCommand('ioredis'), 'npm i ioredis@6')
  t.equal(installCommand('sharp'), 'npm i sharp@0.35')
  t.equal(installCommand('argon2'), 'npm i argon2@0.45')
  t.equal(installCommand('@simplewebauthn/server'), 'npm i @simplewebauthn/server@14')
  for (const name of names) t.match(installCommand(name), /^npm i [@a-z0-9/.-]+@\d+(\.\d+)?$/, name)
})

t.test('installed drivers are found without being loaded, and load', async (t) => {
  for (const name of names) t.equal(hasDriver(name), true, name)
  const use = { option: 'stateStore', feature: 'a Redis store' }
  t.equal(typeof requireDriver<typeof import('ioredis')>('ioredis', use).Redis, 'function')
  const webauthn = await importDriver<typeof import('@simplewebauthn/server')>('@simplewebauthn/server', { option: 'passkey.passkey', feature: 'passkeys' })
  t.equal(typeof webauthn.generateRegistrationOptions, 'function')
})

t.test('a driver that is not installed: an OptionsError naming the option, the feature and the npm i line', async (t) => {
  const use = { option: 'avatar.store', feature: 'a bolt:// avatar store' }
  const err = t.throws(() => loadSync('gatehouse-driver-that-is-not-installed', use, 'npm i gatehouse-driver-that-is-not-installed@1')) as DriverMissingError
  t.ok(err instanceof OptionsError, 'an OptionsError')
  t.match(err, {
    name: 'OptionsError',
    code: 'GATEHOUSE_OPTION',
    option: 'avatar.store',
    driver: 'gatehouse-driver-that-is-not-installed',
    install: 'npm i gatehouse-driver-that-is-not-installed@1',
    message: 'fastify-gatehouse: option "avatar.store" needs gatehouse-driver-that-is-not-installed for a bolt:// avatar store, and it is not installed: npm i gatehouse-driver-that-is-not-installed@1'
  })
  await t.rejects(loadAsync('gatehouse-driver-that-is-not-installed', { option: 'passkey.p', feature: 'passkeys' }, 'npm i x@1'),
    { name: 'OptionsError', code: 'GATEHOUSE_OPTION', option: 'passkey.p', message: /needs gatehouse-driver-that-is-not-installed for passkeys, and it is not installed: npm i x@1$/ }, 'the same through import()')
  const renamed = err.forOption('passkey.p.store')
  t.match(renamed, { option: 'passkey.p.store', driver: err.driver, install: err.install, message: /^fastify-gatehouse: option "passkey\.p\.store" needs gatehouse-driver/ })
})

t.test('a driver that is there but does not load (a native addon of another platform): its error is kept as the cause', async (t) => {
  const broken = join(t.testdir(), 'broken.cjs')
  writeFileSync(broken, 'throw new Error("wrong ELF class: ELFCLASS32")')
  const err = t.throws(() => loadSync(broken, { option: 'SmtpSender', feature: 'sending mail over SMTP' }, 'npm i broken@1')) as DriverMissingError
  t.match(err, { code: 'GATEHOUSE_OPTION', option: 'SmtpSender', message: /failed to load \(wrong ELF class: ELFCLASS32\); reinstall it: npm i broken@1$/ })
  t.match(err.cause, { message: 'wrong ELF class: ELFCLASS32' })
  t.match(err.forOption('smtp').cause, { message: 'wrong ELF class: ELFCLASS32' })
  const brokenModule = join(t.testdir(), 'broken.mjs')
  writeFileSync(brokenModule, 'throw new Error("no such symbol")')
  const rejected = await loadAsync(brokenModule, { option: 'fileServer', feature: 'serving files' }, 'npm i broken@1').catch((e: unknown) => e)
  t.match(rejected, { code: 'GATEHOUSE_OPTION', option: 'fileServer', message: /failed to load \(no such symbol\); reinstall it: npm i broken@1$/, cause: { message: 'no such symbol' } })
})

t.test('only "not found" counts as missing: a package its exports hide from require is loaded anyway', async (t) => {
  const resolve = driverResolution.resolve
  t.teardown(() => { driverResolution.resolve = resolve })
  const failWith = (code: string) => () => { throw Object.assign(new Error(code), { code }) }
  driverResolution.resolve = failWith('ERR_PACKAGE_PATH_NOT_EXPORTED')
  t.equal(hasDriver('ioredis'), true)
  t.equal(typeof requireDriver<typeof import('ioredis')>('ioredis', { option: 'stateStore', feature: 'a Redis store' }).Redis, 'function')
  driverResolution.resolve = failWith('MODULE_NOT_FOUND')
  t.equal(hasDriver('ioredis'), false)
})
