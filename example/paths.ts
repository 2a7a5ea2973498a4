/**
 * Files the demo reads at run time. The demo runs from its sources (tests) and compiled from dist/example
 * (`npm start`), so each is looked up relative to both places.
 */
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
// example/ in the sources, dist/example/ when compiled: the repository root is one or two levels up.
const roots = [join(here, '..'), join(here, '..', '..')]

/** The first existing `<root>/<relative>`; throws naming the file when there is none. */
export function projectFile (relative: string): string {
  for (const root of roots) {
    const candidate = join(root, relative)
    if (existsSync(candidate)) return candidate
  }
  throw new Error(`demo: ${relative} not found`)
}
