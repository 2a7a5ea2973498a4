/**
 * The house's rules that no linter holds (docs/internals/architecture.md): every function of the product is at most
 * 80 lines, so that it can be read in one sitting (counted with the TypeScript compiler from a function's first token,
 * its JSDoc left out, to its closing brace), and no product folder holds more than 20 source files, so that a
 * newcomer finds a room by its name (the toolkit's shelf of independent middlewares, one file each, stays flat).
 */
import t from 'tap'
import ts from 'typescript'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const PRODUCT = ['lib', 'plugins', 'providers', 'hooks', 'stores', 'servers']
const MAX_FUNCTION_LINES = 80
const MAX_FOLDER_FILES = 20
const FLAT_SHELVES = new Set(['plugins/toolkit'])

/** The product's TypeScript sources: its folders and the entry files at the root. */
function productSources (): string[] {
  const inFolders = PRODUCT.flatMap((dir) => readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).map((f) => `${dir}/${f}`))
  const entries = readdirSync(root).filter((f) => f.endsWith('.ts'))
  return [...inFolders, ...entries].filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
}

/** Every function of `file` longer than the limit, as `file:line name (n lines)`. */
function longFunctions (file: string, text = readFileSync(join(root, file), 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(node.end).line
      const name = node.name !== undefined ? node.name.getText(source) : '(anonymous)'
      if (last - first + 1 > MAX_FUNCTION_LINES) found.push(`${file}:${first + 1} ${name} (${last - first + 1} lines)`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

t.test(`every function of the product is at most ${MAX_FUNCTION_LINES} lines`, async (t) => {
  const files = productSources()
  t.ok(files.length > 200, `the product's sources are found (${files.length})`)
  t.same(files.flatMap((f) => longFunctions(f)), [], 'split these into functions named for their steps')
})

t.test('the count finds a long function (the rule can fail)', async (t) => {
  const body = (n: number): string => Array.from({ length: n }, (_, i) => `  const v${i} = ${i}`).join('\n')
  t.same(longFunctions('x.ts', `/** doc */\nfunction ok () {\n${body(MAX_FUNCTION_LINES - 2)}\n}\n`), [], 'exactly the limit passes')
  t.same(longFunctions('x.ts', `class C {\n  m () {\n${body(MAX_FUNCTION_LINES - 1)}\n  }\n}\n`), [`x.ts:2 m (${MAX_FUNCTION_LINES + 1} lines)`], 'one line more is named')
})

t.test(`no product folder holds more than ${MAX_FOLDER_FILES} source files (the toolkit's shelf apart)`, async (t) => {
  const perFolder = new Map<string, number>()
  for (const f of productSources()) {
    const dir = f.includes('/') ? f.slice(0, f.lastIndexOf('/')) : '.'
    perFolder.set(dir, (perFolder.get(dir) ?? 0) + 1)
  }
  t.ok((perFolder.get('plugins/core/sessions') ?? 0) > 0, 'the core\'s rooms are counted')
  const crowded = [...perFolder].filter(([dir, n]) => dir !== '.' && !FLAT_SHELVES.has(dir) && n > MAX_FOLDER_FILES).map(([dir, n]) => `${dir}: ${n}`)
  t.same(crowded, [], 'split these by concern (a room per concern, its README saying what it holds and may import)')
})
