/**
 * The optional properties of the package's own types that do not accept `undefined`. Under
 * `exactOptionalPropertyTypes` (a default of `tsc --init`) `{ stateStore?: string }` refuses
 * `stateStore: process.env.REDIS_URL`, a `string | undefined`; written `stateStore?: string | undefined` it takes
 * it. Read with the TypeScript compiler: a property counts when `undefined` is assignable to its declared type
 * (`unknown`, an alias that includes `undefined`), so only the ones a user would trip on are listed.
 *
 * Run as a program (`node --import ./test/helpers/ts-loader.mjs test/types/optional-properties.ts --fix`) it
 * adds ` | undefined` to each, in place: the mechanical fix the test asks for.
 */
import ts from 'typescript'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** The package's sources: the entries and the layers (docs/internals/architecture.md). */
const SOURCES = ['index.ts', 'toolkit.ts', 'testing.ts', 'augment.ts', 'toolkit-augment.ts', 'lib', 'plugins', 'providers', 'hooks', 'stores', 'servers']

function sourceFiles (path: string): string[] {
  const full = join(root, path)
  if (statSync(full).isDirectory()) return readdirSync(full).flatMap((f) => sourceFiles(join(path, f)))
  return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [full] : []
}

/**
 * The files to read: the sources (to fix them), or their declarations as `tsc -b` emitted them into dist/ (the
 * same property signatures, what an app compiles against, and a quarter of the text: no function bodies).
 */
export type From = 'sources' | 'declarations'

function filesOf (from: From): string[] {
  const sources = SOURCES.flatMap(sourceFiles)
  return from === 'sources' ? sources : sources.map((f) => join(root, 'dist', relative(root, f)).replace(/\.ts$/, '.d.ts'))
}

/** An optional property whose type does not take `undefined`: where it is and its type node. */
export interface Offender { file: string; line: number; name: string; type: ts.TypeNode }

/**
 * One program over the package's sources (and `extra` files, e.g. a fixture that uses them), compiled as an app
 * with `exactOptionalPropertyTypes` would compile it.
 */
export function exactOptionalProgram (extra: string[] = [], from: From = 'sources'): ts.Program {
  return ts.createProgram([...filesOf(from), ...extra], {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    strict: true, exactOptionalPropertyTypes: true, skipLibCheck: true, noEmit: true, types: ['node']
  })
}

/** Every optional property of the package's sources whose declared type does not accept `undefined`. */
export function offenders (program: ts.Program = exactOptionalProgram(), from: From = 'sources'): Offender[] {
  const checker = program.getTypeChecker()
  const out: Offender[] = []
  for (const file of filesOf(from)) {
    const sf = program.getSourceFile(file)!
    const visit = (node: ts.Node): void => {
      if (ts.isPropertySignature(node) && node.questionToken !== undefined && node.type !== undefined) {
        const declared = checker.getTypeFromTypeNode(node.type)
        if (!checker.isTypeAssignableTo(checker.getUndefinedType(), declared)) {
          const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf))
          out.push({ file, line: line + 1, name: node.name.getText(sf), type: node.type })
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(sf)
  }
  return out
}

/** `file:line name` for a report, relative to the repository (a declaration's file and line are dist/'s). */
export function where (o: Offender): string {
  return `${relative(root, o.file)}:${o.line} ${o.name}`
}

/**
 * Adds ` | undefined` to each offender's type, in place (a function or conditional type is put in parentheses).
 * Every edit is an insertion, applied from the end of the file backwards, so nested offenders compose.
 */
function fix (list: Offender[]): void {
  const byFile = new Map<string, Array<[number, string]>>()
  for (const { file, type } of list) {
    const wrap = ts.isFunctionTypeNode(type) || ts.isConstructorTypeNode(type) || ts.isConditionalTypeNode(type)
    const edits = byFile.get(file) ?? []
    if (wrap) edits.push([type.getStart(), '('])
    edits.push([type.getEnd(), `${wrap ? ')' : ''} | undefined`])
    byFile.set(file, edits)
  }
  for (const [file, edits] of byFile) {
    let text = readFileSync(file, 'utf8')
    for (const [at, insert] of edits.sort((a, b) => b[0] - a[0])) text = text.slice(0, at) + insert + text.slice(at)
    writeFileSync(file, text)
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const list = offenders()
  for (const o of list) console.log(where(o))
  if (process.argv.includes('--fix')) { fix(list); console.log(`fixed ${list.length}`) }
}
