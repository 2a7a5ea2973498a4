/**
 * The properties of exported option types, read with the TypeScript compiler (for the docs' drift tests) from the
 * declarations `tsc -b` emitted into dist/ (test/helpers/type-graph.ts): the types as an app sees them, and a
 * program of declarations only, without the sources' function bodies.
 */
import { join } from 'node:path'
import ts from 'typescript'
import { root } from './pages.js'
import { sharedFilesHost } from '../helpers/compiler-host.js'
import { typeGraph } from '../helpers/type-graph.js'

const options: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true, noEmit: true
}
// One host for every entry read in this process: each file is parsed once.
const host = sharedFilesHost(options)

/**
 * For each export of `entry` (a source path from the repository root, read as its emitted declaration) whose name
 * passes `wanted`: its property names, sorted.
 */
export async function exportedProperties (entry: string, wanted: (name: string) => boolean): Promise<Map<string, string[]>> {
  const { code, output } = await typeGraph()
  if (code !== 0) throw new Error(`tsc -b tsconfig.json failed:\n${output.slice(-3000)}`)
  const file = join(root, 'dist', entry.replace(/\.ts$/, '.d.ts'))
  const program = ts.createProgram([file], options, host)
  const checker = program.getTypeChecker()
  const out = new Map<string, string[]>()
  for (const sym of checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)!)!)) {
    if (!wanted(sym.name)) continue
    const target = (sym.flags & ts.SymbolFlags.Alias) !== 0 ? checker.getAliasedSymbol(sym) : sym
    out.set(sym.name, checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(target)).map((p) => p.name).sort())
  }
  return out
}
