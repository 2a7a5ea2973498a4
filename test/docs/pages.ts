/** The documentation's markdown pages, as paths relative to the repository root: the README, CONTRIBUTING.md, bench/RESULTS.md and docs/**. */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = fileURLToPath(new URL('../..', import.meta.url))

/** Every `.md` file under `dir` (relative to the root), in a stable order; the generated `docs/api` is not a source page. */
function markdownUnder (dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`
    if (e.isDirectory()) return path === 'docs/api' ? [] : markdownUnder(path)
    return e.name.endsWith('.md') ? [path] : []
  }).sort()
}

export function docsPages (): string[] {
  return ['README.md', 'CONTRIBUTING.md', 'bench/RESULTS.md', ...markdownUnder('docs')]
}
