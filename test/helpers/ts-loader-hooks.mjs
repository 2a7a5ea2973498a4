// Module hooks for ts-loader.mjs. Relative `.js` specifiers of the project's own files resolve to the `.ts`
// file beside them (as `moduleResolution: NodeNext` reads them); `.ts` files outside node_modules are
// transpiled (types erased, nothing checked: `npm run typecheck` does that) to ES modules with an inline source
// map, so that coverage and stack traces point into the .ts source. Each result is cached under .tap/ts-cache/,
// keyed by the file's path and content and this file's own settings; a cache entry is written under a temporary
// name and renamed, so that parallel test processes never read half an entry.
import { existsSync } from 'node:fs'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const cacheDir = fileURLToPath(new URL('../../.tap/ts-cache/', import.meta.url))
const compilerOptions = {
  target: 'ES2022',
  module: 'ESNext',
  esModuleInterop: true,
  inlineSourceMap: true,
  inlineSources: true
}
const settings = JSON.stringify(compilerOptions) + require('typescript/package.json').version
let ts

const ownFile = (url) => url.startsWith('file:') && !url.includes('/node_modules/')

export async function resolve (specifier, context, next) {
  const parent = context.parentURL
  // A parent with a query is a module t.mockImport loaded: its imports are left to @tapjs/mock's resolver (next
  // in the chain), which swaps in the mocked modules.
  if (parent !== undefined && ownFile(parent) && !parent.includes('?') && /^\.\.?\//.test(specifier) && specifier.endsWith('.js')) {
    const ts = new URL(specifier.slice(0, -3) + '.ts', parent)
    if (existsSync(ts)) return { url: ts.href, format: 'module', shortCircuit: true }
  }
  return next(specifier, context)
}

export async function load (url, context, next) {
  if (!ownFile(url) || !url.endsWith('.ts')) return next(url, context)
  const file = fileURLToPath(url)
  const source = await readFile(file, 'utf8')
  const key = createHash('sha256').update(settings).update('\0').update(file).update('\0').update(source).digest('hex')
  const cached = join(cacheDir, `${key}.js`)
  let output
  try {
    output = await readFile(cached, 'utf8')
  } catch {
    output = transpile(file, source)
    await mkdir(cacheDir, { recursive: true })
    const temporary = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`
    await writeFile(temporary, output)
    await rename(temporary, cached)
  }
  return { format: 'module', source: output, shortCircuit: true }
}

function transpile (fileName, source) {
  ts ??= require('typescript')
  const { options } = ts.convertCompilerOptionsFromJson(compilerOptions, '.')
  return ts.transpileModule(source, { fileName, compilerOptions: options }).outputText
}
