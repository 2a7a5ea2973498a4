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
const fileTap = new URL('./file-tap.mjs', import.meta.url).href

export async function resolve (specifier, context, next) {
  const parent = context.parentURL
  // `tap` of a test file: its own test (file-tap.mjs), which is tap's root test unless a group runs the file.
  if (specifier === 'tap' && parent !== undefined && ownFile(parent) && !parent.includes('?') && parent.endsWith('.test.ts')) {
    return { url: `${fileTap}?for=${encodeURIComponent(parent)}`, format: 'module', shortCircuit: true }
  }
  // A parent with a query is a module t.mockImport loaded: its imports go to @tapjs/mock's resolver first (next
  // in the chain), which swaps in the mocked modules (it knows them by their `.js` names).
  if (parent !== undefined && ownFile(parent) && !parent.includes('?') && /^\.\.?\//.test(specifier) && specifier.endsWith('.js')) {
    const ts = new URL(specifier.slice(0, -3) + '.ts', parent)
    if (existsSync(ts)) return { url: ts.href, format: 'module', shortCircuit: true }
  }
  try {
    return await next(specifier, context)
  } catch (err) {
    // A `.js` name of an own `.ts` file that nothing before resolved: t.mockImport's entry point (an absolute
    // URL with a query) and the unmocked imports of a mocked module.
    const ts = ownTsOf(specifier, parent)
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || ts === undefined) throw err
    return next(ts, context)
  }
}

/** `specifier` with `.ts` for `.js` when it names an own file that exists as `.ts` (query kept), else undefined. */
function ownTsOf (specifier, parent) {
  if (!/^(\.\.?\/|file:)/.test(specifier) || (parent === undefined && !specifier.startsWith('file:'))) return undefined
  const url = new URL(specifier, parent)
  if (!ownFile(url.href) || !url.pathname.endsWith('.js')) return undefined
  url.pathname = url.pathname.slice(0, -3) + '.ts'
  if (!existsSync(fileURLToPath(url))) return undefined
  return specifier.startsWith('file:') ? url.href : specifier.replace(/\.js(?=\?|$)/, '.ts')
}

export async function load (url, context, next) {
  if (!ownFile(url) || !new URL(url).pathname.endsWith('.ts')) return next(url, context)
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
