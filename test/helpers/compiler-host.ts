/**
 * A TypeScript compiler host that parses each file once for every program made with it, as the language service
 * shares files between programs of the same options: the tests that read the sources with the compiler make
 * several programs over mostly the same files (Node's and Fastify's types, most of the sources). Each program still
 * merges the declarations of its own files and checks them in its own right.
 */
import ts from 'typescript'

/**
 * A host for programs of `options` (one host per set of options: a parsed file is bound with them), built on `host`
 * (TypeScript's default host for them unless given, e.g. its incremental one).
 */
export function sharedFilesHost (options: ts.CompilerOptions, host = ts.createCompilerHost(options)): ts.CompilerHost {
  const parsed = new Map<string, ts.SourceFile | undefined>()
  const parse = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, language, ...rest) => {
    const key = `${fileName}\0${typeof language === 'object' ? `${language.languageVersion}:${language.impliedNodeFormat}` : language}`
    if (!parsed.has(key)) parsed.set(key, parse(fileName, language, ...rest))
    return parsed.get(key)
  }
  return host
}
