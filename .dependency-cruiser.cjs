/**
 * Layer rules of fastify-gatehouse, checked by `npm run lint:deps` in CI. Each top-level folder is one layer (the
 * root's entry files are the top two). Dependencies point one way, down this list (a module may import its own
 * layer and any layer below it, never one above):
 *
 *   5 entries              index.ts (its deprecated names: deprecated.ts), toolkit.ts, testing.ts, compat.ts, augment.ts,
 *                          toolkit-augment.ts
 *   4 root composer        auth.ts (`authPlugin`), provider-entries.ts (the `providers` option, go-pkgz/auth's `add*` methods)
 *   3 providers            providers/ (through the provider kit only: plugins/core/kit.ts)
 *   2 plugins              plugins/core/ (the auth core; plugin.ts composes it with the hooks), plugins/avatar/,
 *                          plugins/toolkit/ (stands alone)
 *   1 hooks, stores,       hooks/, stores/ (the store families and the state store), servers/ (the OAuth2
 *     servers              servers): each on lib only, none on another
 *   0 lib                  lib/
 *
 * Type-only imports count: a cycle through types is still a cycle.
 */
const LAYERS = [
  '^lib/',
  '^(hooks|stores|servers)/',
  '^plugins/',
  '^providers/',
  '^(auth|provider-entries)\\.ts$',
  '^(index|deprecated|toolkit|testing|compat|augment|toolkit-augment)\\.ts$'
]

/** One rule per layer: nothing in it imports a module of a higher layer. */
const layerRules = LAYERS.slice(0, -1).map((path, i) => ({
  name: `layer-${i}-imports-no-higher-layer`,
  severity: 'error',
  comment: `A module of layer ${i} (${path}) imports nothing of a higher layer (see the list at the top of this file).`,
  from: { path },
  to: { path: LAYERS.slice(i + 1).map((p) => `(${p})`).join('|') }
}))

/**
 * The auth core's rooms (plugins/core/), lowest first; each may import its own room and the rooms below it, never one
 * above, and none imports the composer files at plugins/core/ itself (plugin.ts, options.ts, routes.ts, kit.ts):
 *
 *   base      the core's types and the small parts they name (claims, JWS, cookies, the registered clients' records,
 *             the OAuth endpoints' errors, DPoP proofs)
 *   keys      signing keys, issuing and verifying tokens, go-pkgz tokens
 *   sessions  a request's session: reading, the per-request checks, revocation, the caches, refresh, migration
 *   signin    the sign-in prelude (captcha, lockout, redirects, re-authentication, trusted devices) and mounting providers
 *   clients   the registered clients' endpoints: token, device and native sign-in, refresh families, revocation
 */
const CORE_ROOMS = ['base', 'keys', 'sessions', 'signin', 'clients']
const coreRoomRules = CORE_ROOMS.map((room, i) => ({
  name: `core-${room}-imports-no-higher-room`,
  severity: 'error',
  comment: `plugins/core/${room}/ imports only ${CORE_ROOMS.slice(0, i + 1).join(', ')} of the core's rooms (see CORE_ROOMS).`,
  from: { path: `^plugins/core/${room}/` },
  to: { path: `^plugins/core/(?!(${CORE_ROOMS.slice(0, i + 1).join('|')})/)` }
}))

module.exports = {
  forbidden: [
    ...layerRules,
    ...coreRoomRules,
    { name: 'no-circular', severity: 'error', comment: 'No import cycles, type imports included.', from: {}, to: { circular: true } },
    {
      name: 'hooks-own-their-types',
      severity: 'error',
      comment: 'The hooks depend on lib and their own types (hooks/types.ts) only, not on the stores or servers.',
      from: { path: '^hooks/' },
      to: { path: '^(stores|servers)/' }
    },
    {
      name: 'core-parts-below-the-core-plugin',
      severity: 'error',
      comment: 'The core\'s parts never import the core plugin that composes them (plugins/core/plugin.ts).',
      from: { path: '^plugins/core/', pathNot: '^plugins/core/plugin\\.ts$' },
      to: { path: '^plugins/core/plugin\\.ts$' }
    },
    {
      name: 'core-knows-no-avatar-or-toolkit',
      severity: 'error',
      comment: 'The auth core knows neither the avatar plugin (which plugs into it) nor the toolkit.',
      from: { path: '^plugins/core/' },
      to: { path: '^plugins/(avatar|toolkit)/' }
    },
    {
      name: 'toolkit-stands-alone',
      severity: 'error',
      comment: 'The HTTP toolkit imports nothing from the auth core, providers, hooks or servers; of the stores only the state store.',
      from: { path: '^plugins/toolkit/' },
      to: { path: '^(plugins/(?!toolkit/)|providers|hooks|servers|stores/(?!state/))' }
    },
    {
      name: 'providers-only-through-the-kit',
      severity: 'error',
      comment: 'A provider reaches the auth core through the provider kit (plugins/core/kit.ts) only: never its internals.',
      from: { path: '^providers/' },
      to: { path: '^plugins/', pathNot: '^plugins/core/kit\\.ts$' }
    },
    {
      name: 'avatar-beside-the-toolkit',
      severity: 'error',
      comment: 'The avatar plugin uses the core, stores and lib; never the toolkit or the servers.',
      from: { path: '^plugins/avatar/' },
      to: { path: '^(plugins/toolkit/|servers/)' }
    },
    {
      name: 'stores-and-servers-stand-alone',
      severity: 'error',
      comment: 'Stores and the OAuth2 servers depend on lib only.',
      from: { path: '^(stores|servers)/' },
      to: { path: '^(plugins|providers|hooks|servers|stores)/', pathNot: '^$1/' }
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true }
    }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|test|example|bench)/' },
    tsPreCompilationDeps: true,
    // The package's project (tsconfig.json is the solution listing every project of the TypeScript graph).
    tsConfig: { fileName: 'tsconfig.build.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.d.ts'] },
    moduleSystems: ['es6', 'cjs']
  }
}
