/** The install size the pages give, against the bare install scratch-app.test.ts measures. */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from '../docs/pages.js'

/**
 * The README and the installing guide give the bare install's size as measured here (issue 37 item 6): every
 * "N packages (… X MB" they write is within a tolerance of this install (the registry moves on between runs).
 * `GATEHOUSE_UPDATE_DOCS=1` writes the measured figures into both pages instead.
 */
export function checkInstallFigures (t: { ok: (ok: boolean, message: string) => unknown; comment: (message: string) => unknown }, packages: number, kib: number): void {
  const mb = Math.round(kib * 1024 / 100_000) / 10
  t.comment(`measured: ${packages} packages, ${mb} MB (du -sk: ${kib} KiB)`)
  const FIGURE = /(\d+) packages( with Fastify)?(,? \(?)(\d+(?:\.\d+)?) MB/g
  for (const page of ['README.md', 'docs/guide/installing.md']) {
    const file = join(root, page)
    let text = readFileSync(file, 'utf8')
    if (process.env.GATEHOUSE_UPDATE_DOCS === '1') {
      text = text.replace(FIGURE, (_all, _n: string, fastify: string | undefined, between: string) => `${packages} packages${fastify ?? ''}${between}${mb} MB`)
      writeFileSync(file, text)
    }
    const figures = [...text.matchAll(FIGURE)].map((m) => ({ packages: Number(m[1]), mb: Number(m[4]) }))
    t.ok(figures.length > 0, `${page} gives the install's size`)
    for (const f of figures) {
      t.ok(Math.abs(f.packages - packages) <= 3 && Math.abs(f.mb - mb) <= mb * 0.1,
        `${page}: "${f.packages} packages, ${f.mb} MB" is within 3 packages and 10% of the measured ${packages} packages, ${mb} MB (GATEHOUSE_UPDATE_DOCS=1 writes them)`)
    }
  }
}
