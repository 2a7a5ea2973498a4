/**
 * The Node.js versions the package supports are said once and plainly, the same in package.json `engines`, the
 * README and the installing guide: "22.12 or later", and 20 named as not supported.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from './pages.js'

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }
const read = (file: string): string => readFileSync(join(root, file), 'utf8')

t.test('engines is one lower bound, and the README and the installing guide state that bound', async (t) => {
  const m = /^>=(\d+)\.(\d+)\.0$/.exec(pkg.engines.node)
  t.ok(m, `engines.node "${pkg.engines.node}" is ">=major.minor.0"`)
  const since = `Node.js **${m?.[1]}.${m?.[2]} or later**`
  t.match(read('README.md'), `Supported: ${since}`, 'the README')
  t.match(read('docs/guide/installing.md'), `Supported: ${since}`, 'the installing guide')
})

t.test('versions below the bound are called unsupported, never supported', async (t) => {
  const major = Number(/^>=(\d+)/.exec(pkg.engines.node)?.[1])
  t.match(read('README.md'), new RegExp(`Supported: [^\\n]*not ${major - 2}\\)`), 'the README names the previous LTS as not supported')
  t.match(read('docs/guide/installing.md'), new RegExp(`Not supported: Node\\.js ${major - 2} and older`))
  for (const file of ['README.md', 'docs/guide/installing.md']) {
    t.notMatch(read(file), new RegExp(`Node(?:\\.js)? \\*{0,2}${major - 2}(?:\\.\\d+)*\\+`), `${file}: no "${major - 2}+" support claim`)
  }
})
