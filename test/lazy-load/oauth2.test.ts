/**
 * The OAuth2 family loads its heavy parts on use: importing the package loads neither jose nor the dev server;
 * the dev server's code is imported when the app becomes ready, jose when an OpenID Connect provider is set up.
 * sharp, an optional package, is never loaded: the dev server draws its pictures without it. Run in a fresh process (lazy-load-child.ts), where nothing
 * was loaded before.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

// The child runs with this process's TypeScript loader only (no coverage or mock hooks).
const loader = process.execArgv.filter((a) => a.includes('ts-loader'))

t.test('jose and the dev server are loaded when used, not before; sharp not even for the dev server\'s pictures', async (t) => {
  const child = spawnSync(process.execPath, [...loader, fileURLToPath(new URL('./oauth2-child.ts', import.meta.url))], { encoding: 'utf8', timeout: 90_000 })
  t.equal(child.status, 0, child.stderr)
  t.same(JSON.parse(child.stdout), {
    imported: [],
    registered: [],
    ready: ['dev-server'],
    pictureServed: ['dev-server'],
    oidcReady: ['jose', 'dev-server'],
    pictureStatus: 200
  })
})
