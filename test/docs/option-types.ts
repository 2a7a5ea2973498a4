/** The properties of exported option types, read with the TypeScript compiler (for the docs' drift tests). */
import { join } from 'node:path'
import ts from 'typescript'
import { root } from './pages.js'
import { sharedFilesHost } from '../helpers/compiler-host.js'

const options: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true, noEmit: true
}
// One host for every entry read in this process: each file is parsed once.
const host = sharedFilesHost(options)

/** For each export of `entry` (a path from the repository root) whose name passes `wanted`: its property names, sorted. */
export function exportedProperties (entry: string, wanted: (name: string) => boolean): Map<string, string[]> {
  const file = join(root, entry)
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
