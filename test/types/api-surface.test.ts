/**
 * The public surface's size (issue 44 items 2 and 3), counted with the compiler from the sources (the same names
 * the emitted `.d.ts` has; `npm run api:check` counts those in CI): each entry within its limit, deprecated names
 * apart (they go in 1.0), and no name that two entries export as two different things.
 */
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { ENTRIES, kept, surface, surfaceProblems, surfaceSummary } from '../helpers/api-surface.js'

t.setTimeout(120_000)
const root = fileURLToPath(new URL('../../', import.meta.url))
const names = surface(root, 'source')

t.test('each entry keeps its names within its limit (root 60, providers 60, toolkit 120, stores 40) and no name means two things', async (t) => {
  t.comment(surfaceSummary(names).join('\n'))
  t.same(surfaceProblems(names), [])
  for (const entry of ENTRIES.filter((e) => e.limit !== undefined)) {
    const count = kept(names.get(entry)!).length
    t.ok(count <= entry.limit!, `${entry.subpath}: ${count} names, limit ${entry.limit}`)
  }
})

t.test('the root entry holds what a first hour needs: the plugin, the provider plugins, the errors, the audit events', async (t) => {
  const rootNames = new Set(kept(names.get(ENTRIES[0]!)!).map((n) => n.name))
  for (const name of ['authPlugin', 'AuthOptions', 'GatehouseAuth', 'User', 'Claims', 'directProvider', 'oauth2Provider', 'emailProvider', 'HttpError', 'ErrorCodes', 'AuditEvent', 'AuditEventOf']) {
    t.ok(rootNames.has(name), name)
  }
  // One event union and a helper for one event, not an interface per event.
  t.notOk([...rootNames].some((n) => /Event$/.test(n) && n !== 'AuditEvent'), 'no per-event interface')
  // Internals stay out of the 1.0 surface.
  for (const name of ['ResolvedOptions', 'MemoryRefreshCache', 'requestFields', 'readLoginRequest', 'safeEqual', 'Throttle', 'JwsKey', 'BasicAuthOptions']) t.notOk(rootNames.has(name), name)
})

t.test('a deprecated name is marked so where it is exported (the compiler and editors show it)', async (t) => {
  const root = names.get(ENTRIES[0]!)!
  for (const name of ['verifyProvider', 'GatehouseApi', 'SendError', 'RecentOptions', 'LoginSucceededEvent', 'ProviderKit']) {
    t.equal(root.find((n) => n.name === name)?.deprecated, true, name)
  }
  // The same declaration is not deprecated where it lives now.
  const providers = names.get(ENTRIES[1]!)!
  t.equal(providers.find((n) => n.name === 'ProviderKit')?.deprecated, false, 'ProviderKit in fastify-gatehouse/providers')
})
