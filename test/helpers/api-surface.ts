/**
 * The package's public names per entry, read with the TypeScript compiler (issue 44 items 2 and 3): each entry of
 * package.json `exports`, its exported names (values and types together, as `import { … }` sees them), the limit
 * each entry is held to, and the names two entries export (which must then be one declaration). Used by
 * `npm run api:check` over the emitted `dist/*.d.ts` and by test/types/api-surface.test.ts over the sources (the
 * same names: a `.d.ts` exports exactly what its `.ts` does).
 */
import ts from 'typescript'
import { join } from 'node:path'

/** An entry: its subpath, its source file and its emitted declarations (relative to the package root), its limit. */
export interface Entry { readonly subpath: string; readonly source: string; readonly dts: string; readonly limit: number | undefined }

/**
 * The entries and their limits (names, values and types together). /servers, /testing and /compat have no limit of
 * the issue's; they are reported all the same.
 */
export const ENTRIES: readonly Entry[] = [
  { subpath: '.', source: 'index.ts', dts: 'dist/index.d.ts', limit: 60 },
  { subpath: './providers', source: 'providers/index.ts', dts: 'dist/providers/index.d.ts', limit: 60 },
  { subpath: './toolkit', source: 'toolkit.ts', dts: 'dist/toolkit.d.ts', limit: 120 },
  { subpath: './stores', source: 'stores/index.ts', dts: 'dist/stores/index.d.ts', limit: 40 },
  { subpath: './servers', source: 'servers/index.ts', dts: 'dist/servers/index.d.ts', limit: undefined },
  { subpath: './testing', source: 'testing.ts', dts: 'dist/testing.d.ts', limit: undefined },
  { subpath: './compat', source: 'compat.ts', dts: 'dist/compat.d.ts', limit: undefined }
]

/** One exported name: `value`, `type` or both (a class, an enum, a const with a type of the same name). */
export interface ExportedName {
  readonly name: string
  readonly kind: 'value' | 'type' | 'value+type'
  /** Where it is declared (file:position of its first declaration), to tell one declaration from two. */
  readonly declaration: string
  /**
   * Marked `@deprecated` on the way from the entry to its declaration (an export specifier, an alias, the
   * declaration itself): a name kept in its old place until 1.0, not counted against the entry's limit.
   */
  readonly deprecated: boolean
  /** The name's type, printed: a deprecated alias of a name of another entry must be the same thing. */
  readonly type: string
}

/** A program over the given entry files (sources or declarations), no type check: names are resolved only. */
export function surfaceProgram (root: string, files: readonly string[]): ts.Program {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    resolveJsonModule: true
  }
  return ts.createProgram(files.map((f) => join(root, f)), options)
}

/** The names `file` exports, sorted, with their kind and declaration. */
export function exportedNames (program: ts.Program, root: string, file: string): ExportedName[] {
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(join(root, file))
  if (source === undefined) throw new Error(`${file}: not in the program`)
  const moduleSymbol = checker.getSymbolAtLocation(source)
  if (moduleSymbol === undefined) throw new Error(`${file}: not a module`)
  return checker.getExportsOfModule(moduleSymbol).map((symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    const value = (target.flags & ts.SymbolFlags.Value) !== 0
    const type = (target.flags & (ts.SymbolFlags.Type | ts.SymbolFlags.Namespace)) !== 0
    const decl = target.declarations?.[0]
    const where = decl === undefined ? '?' : `${decl.getSourceFile().fileName.slice(root.length).replace(/^\/+/, '')}:${decl.pos}`
    const printed = decl === undefined ? '?' : checker.typeToString(value ? checker.getTypeOfSymbol(target) : checker.getDeclaredTypeOfSymbol(target), undefined, ts.TypeFormatFlags.NoTruncation)
    return { name: symbol.name, kind: value && type ? 'value+type' : value ? 'value' : 'type', declaration: where, deprecated: deprecatedOnTheWay(checker, symbol), type: printed } as const
  }).sort((a, b) => a.name.localeCompare(b.name, 'en'))
}

/** Whether a `@deprecated` tag marks the symbol, any alias it goes through, or its declaration. */
function deprecatedOnTheWay (checker: ts.TypeChecker, symbol: ts.Symbol): boolean {
  for (let s: ts.Symbol | undefined = symbol; s !== undefined;) {
    if (s.declarations?.some((d) => ts.getJSDocDeprecatedTag(d) !== undefined || ts.getJSDocDeprecatedTag(d.parent?.parent ?? d) !== undefined && ts.isVariableStatement(d.parent.parent))) return true
    if ((s.flags & ts.SymbolFlags.Alias) === 0) return false
    s = checker.getImmediateAliasedSymbol(s)
  }
  return false
}

/** Each entry's names, from the files `fileOf` picks (`source` or `dts`). */
export function surface (root: string, fileOf: 'source' | 'dts'): Map<Entry, ExportedName[]> {
  const program = surfaceProgram(root, ENTRIES.map((e) => e[fileOf]))
  return new Map(ENTRIES.map((e) => [e, exportedNames(program, root, e[fileOf])]))
}

/** The names an entry keeps in 1.0: all but the deprecated ones. */
export const kept = (list: readonly ExportedName[]): ExportedName[] => list.filter((n) => !n.deprecated)

/**
 * What breaks the rules: an entry whose 1.0 names are above its limit; a name two entries export as two
 * declarations, unless one of them is a deprecated alias (a name kept in its old place) of the same type.
 */
export function surfaceProblems (names: Map<Entry, ExportedName[]>): string[] {
  const problems: string[] = []
  for (const [entry, list] of names) {
    const count = kept(list).length
    if (entry.limit !== undefined && count > entry.limit) problems.push(`${entry.subpath} exports ${count} names (not counting deprecated ones), above its limit of ${entry.limit}`)
  }
  const seen = new Map<string, { entry: Entry; name: ExportedName }>()
  for (const [entry, list] of names) {
    for (const n of list) {
      const other = seen.get(n.name)
      if (other === undefined) { seen.set(n.name, { entry, name: n }); continue }
      if (other.name.declaration === n.declaration) continue
      if ((other.name.deprecated || n.deprecated) && other.name.type === n.type) continue
      problems.push(`${n.name} means two things: ${other.entry.subpath} exports ${other.name.declaration}, ${entry.subpath} exports ${n.declaration}`)
    }
  }
  return problems
}

/** One line per entry: `.  57 names (19 values, 38 types; limit 60) + 176 deprecated until 1.0`. */
export function surfaceSummary (names: Map<Entry, ExportedName[]>): string[] {
  return [...names].map(([entry, all]) => {
    const list = kept(all)
    const values = list.filter((n) => n.kind !== 'type').length
    const limit = entry.limit === undefined ? '' : `; limit ${entry.limit}`
    const old = all.length - list.length
    return `${entry.subpath.padEnd(12)} ${String(list.length).padStart(4)} names (${values} values, ${list.length - values} types${limit})${old === 0 ? '' : ` + ${old} deprecated until 1.0`}`
  })
}
