/**
 * Passkeys load their heavy parts on use: importing the package loads neither @simplewebauthn/server nor lmdb;
 * registering the passkey provider loads @simplewebauthn/server, and lmdb only with a `bolt://` store. Run in a
 * fresh process (lazy-load-child.ts), where nothing was loaded before.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

// The child runs with this process's TypeScript loader only (no coverage or mock hooks).
const loader = process.execArgv.filter((a) => a.includes('ts-loader'))

t.test('@simplewebauthn/server and lmdb are loaded when used, not before', async (t) => {
  const child = spawnSync(process.execPath, [...loader, fileURLToPath(new URL('./passkey-child.ts', import.meta.url))], { encoding: 'utf8', timeout: 90_000 })
  t.equal(child.status, 0, child.stderr)
  t.same(JSON.parse(child.stdout), {
    imported: [],
    memoryStore: ['simplewebauthn'],
    boltStore: ['simplewebauthn', 'lmdb']
  })
})
