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

/** The page's text outside fenced code blocks and inline code, where a `[x](y)` is not a link. */
function prose (text: string): string {
  return text.replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, (code) => code.replace(/[[\]()]/g, ' '))
}

/** The targets of a markdown page's relative links and images (`x.md#anchor`, `../y.png`), in order. */
export function relativeLinks (text: string): string[] {
  return [...prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((href) => !/^[a-z]+:/i.test(href))
}
