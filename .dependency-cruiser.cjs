/**
 * Layer rules of fastify-gatehouse, checked by `npm run lint:deps` in CI. Dependencies point one way:
 *
 *   entries (index.ts, toolkit.ts, augment.ts) → root composer (plugins/auth.ts, plugins/provider-methods.ts)
 *   → providers → auth core (plugins/core*, hooks) → lib
 *   avatar plugin → auth core, stores → lib;  toolkit → lib;  servers → lib;  stores → lib
 *
 * Type-only imports count: a cycle through types is still a cycle.
 */
const LOWER_THAN_ROOT = '^(lib|hooks|providers|servers|stores|plugins/(core|avatar|toolkit))'
const ROOT = '^(index\\.ts|toolkit\\.ts|augment\\.ts|plugins/auth\\.ts|plugins/provider-methods\\.ts)$'

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'No import cycles, type imports included.', from: {}, to: { circular: true } },
    {
      name: 'lib-is-a-leaf',
      severity: 'error',
      comment: 'lib/ holds code that is not a plugin; it depends on nothing of the package outside lib/.',
      from: { path: '^lib/' },
      to: { path: '^(plugins|providers|hooks|servers|stores|index\\.ts|toolkit\\.ts|augment\\.ts)' }
    },
    {
      name: 'toolkit-stands-alone',
      severity: 'error',
      comment: 'The HTTP toolkit imports nothing from the auth core, providers, stores or servers.',
      from: { path: '^plugins/toolkit/' },
      to: { path: '^(plugins/(?!toolkit/)|providers|hooks|servers|stores)' }
    },
    {
      name: 'core-knows-no-plugins',
      severity: 'error',
      comment: 'The auth core (plugins/core*, hooks) imports nothing from providers, avatar, toolkit, stores or servers.',
      from: { path: '^(plugins/core|hooks/)' },
      to: { path: '^(plugins/(avatar|toolkit|auth|provider-methods)|providers|servers|stores)' }
    },
    {
      name: 'providers-below-the-root',
      severity: 'error',
      comment: 'Providers use the core and lib (and the servers, stores); never the avatar plugin, toolkit or root.',
      from: { path: '^providers/' },
      to: { path: '^plugins/(avatar|toolkit|auth|provider-methods)' }
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
      name: 'nothing-imports-the-root',
      severity: 'error',
      comment: 'Only entries import the root composer; the layers below never reach up.',
      from: { path: LOWER_THAN_ROOT },
      to: { path: ROOT }
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
