/**
 * Tells whether a package has been loaded in this process, through `require` (CommonJS module cache) or through
 * `import` (ESM, recorded by lazy-hooks.mjs). Import it before anything else: modules loaded earlier are missed.
 * Used by the lazy-load children in test/lazy-load/.
 */
import { createRequire, register } from 'node:module'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const log = join(tmpdir(), `gatehouse-lazy-${process.pid}.log`)
writeFileSync(log, '')
process.on('exit', () => { rmSync(log, { force: true }) })
register('./state-store-hooks.mjs', import.meta.url, { data: { log } })

const require = createRequire(import.meta.url)

/** Whether any file of the package `name` has been loaded, by require or by import. */
export function loaded (name: string): boolean {
  return loadedFile(`/node_modules/${name}/`)
}

/** Whether any file whose path holds `part` (`/providers/saml/`) has been loaded, by require or by import. */
export function loadedFile (part: string): boolean {
  return Object.keys(require.cache).some((k) => k.includes(part)) ||
    readFileSync(log, 'utf8').split('\n').some((url) => url.includes(part))
}
