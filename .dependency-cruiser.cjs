/**
 * Layer rules of fastify-gatehouse, checked by `npm run lint:deps` in CI. Dependencies point one way, down this
 * list (a module may import its own layer and any layer below it, never one above):
 *
 *   6 entries              index.ts, toolkit.ts, testing.ts, augment.ts, toolkit-augment.ts
 *   5 root composer        plugins/auth.ts, plugins/provider-methods.ts
 *   4 plugins on the core  providers/, plugins/avatar(.ts|/)
 *   3 core plugin          plugins/core.ts (composes the core's parts and the hooks into `fastify.auth`)
 *   2 hooks                hooks/ (types of their own; the core's parts never import them)
 *   1 core parts           plugins/core/ (token service, sessions with their XSRF rule, keys, revocation, …)
 *   0 leaves               lib/, stores/, servers/, plugins/toolkit/ (each also stands alone, see below)
 *
 * Type-only imports count: a cycle through types is still a cycle.
 */
const LAYERS = [
  '^(lib|stores|servers|plugins/toolkit)/',
  '^plugins/core/',
  '^hooks/',
  '^plugins/core\\.ts$',
  '^(providers/|plugins/avatar(\\.ts$|/))',
  '^plugins/(auth|provider-methods)\\.ts$',
  '^(index|toolkit|testing|augment|toolkit-augment)\\.ts$'
]

/** One rule per layer: nothing in it imports a module of a higher layer. */
const layerRules = LAYERS.slice(0, -1).map((path, i) => ({
  name: `layer-${i}-imports-no-higher-layer`,
  severity: 'error',
  comment: `A module of layer ${i} (${path}) imports nothing of a higher layer (see the list at the top of this file).`,
  from: { path },
  to: { path: LAYERS.slice(i + 1).map((p) => `(${p})`).join('|') }
}))

module.exports = {
  forbidden: [
    ...layerRules,
    { name: 'no-circular', severity: 'error', comment: 'No import cycles, type imports included.', from: {}, to: { circular: true } },
    {
      name: 'lib-is-a-leaf',
      severity: 'error',
      comment: 'lib/ holds code that is not a plugin; it depends on nothing of the package outside lib/.',
      from: { path: '^lib/' },
      to: { path: '^(plugins|providers|hooks|servers|stores|index\\.ts|toolkit\\.ts|testing\\.ts|augment\\.ts|toolkit-augment\\.ts)' }
    },
    {
      name: 'hooks-own-their-types',
      severity: 'error',
      comment: 'The hooks depend on lib and their own types (hooks/types.ts) only, not on the core parts they are given.',
      from: { path: '^hooks/' },
      to: { path: '^plugins/' }
    },
    {
      name: 'toolkit-stands-alone',
      severity: 'error',
      comment: 'The HTTP toolkit imports nothing from the auth core, providers, stores or servers.',
      from: { path: '^plugins/toolkit/' },
      to: { path: '^(plugins/(?!toolkit/)|providers|hooks|servers|stores)' }
    },
    {
      name: 'providers-below-the-root',
      severity: 'error',
      comment: 'Providers use the core and lib (and the servers, stores); never the avatar plugin, toolkit or root.',
      from: { path: '^providers/' },
      to: { path: '^plugins/(avatar|toolkit|auth|provider-methods)' }
    },
    {
      name: 'providers-only-through-the-kit',
      severity: 'error',
      comment: 'A provider reaches the auth core through the provider kit (plugins/core/kit.ts) only: never its internals.',
      from: { path: '^providers/' },
      to: { path: '^plugins/', pathNot: '^plugins/core/kit\\.ts$' }
    },
    {
      name: 'avatar-below-the-root',
      severity: 'error',
      comment: 'The avatar plugin uses the core, stores and lib; never providers, servers, toolkit or root.',
      from: { path: '^plugins/avatar' },
      to: { path: '^(plugins/(toolkit|auth|provider-methods)|providers|servers)' }
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
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.d.ts'] },
    moduleSystems: ['es6', 'cjs']
  }
}
