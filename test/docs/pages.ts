/** The documentation's markdown pages, as paths relative to the repository root: the README, CONTRIBUTING.md, bench/RESULTS.md and docs/**. */
import { readdirSync, readFileSync } from 'node:fs'
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

/** The fenced code blocks of a markdown text (or of its `## heading` section), with their language, in order. */
export function codeBlocks (text: string, section?: string): Array<{ lang: string; code: string }> {
  let part = text
  if (section !== undefined) {
    const start = text.indexOf(`\n## ${section}\n`)
    if (start === -1) throw new Error(`no "## ${section}" section`)
    const end = text.indexOf('\n## ', start + 1)
    part = text.slice(start, end === -1 ? undefined : end)
  }
  return [...part.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }))
}

/**
 * The README's five-minute tutorial as a reader follows it: the project setup (`sh`), `app.ts`, the commands that
 * make the hash and the secret and start the app (`sh`), and the registration that makes alice an admin (`ts`).
 */
export function tutorialBlocks (): { setup: string; app: string; run: string; admin: string } {
  const blocks = codeBlocks(readFileSync(join(root, 'README.md'), 'utf8'), 'Five-minute tutorial')
  const [setup, run] = blocks.filter((b) => b.lang === 'sh').map((b) => b.code)
  const [app, admin] = blocks.filter((b) => b.lang === 'ts').map((b) => b.code)
  if (setup === undefined || run === undefined || app === undefined || admin === undefined) {
    throw new Error('README.md: the tutorial needs its two sh blocks (setup, run) and two ts blocks (app.ts, the admin registration)')
  }
  return { setup, app, run, admin }
}
