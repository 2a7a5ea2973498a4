/**
 * The package as a user gets it, for the tests that install it (scratch-app.test.ts, client-trial.test.ts): the
 * build (`tsc -b`, up to date after `npm run build`; its diagnostics checked) packed with
 * `npm pack --ignore-scripts`, and the commands a user runs, each with a Node first on PATH and without the test
 * runner's loaders and npm's script variables.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { userEnv } from './tutorial-run.js'
import { typeGraph, type GraphDiagnostic } from '../helpers/type-graph.js'
import type { NodeBinary } from '../helpers/node-binaries.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

export interface Run { code: number | null; stdout: string; stderr: string }

export const THIS_NODE: NodeBinary = { label: 'this process', version: process.version, bin: process.execPath }

/** Runs a command with `node` (this one by default) first on PATH; killed after `timeoutMs`. */
export async function run (cmd: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 300_000, input?: string, node: NodeBinary = THIS_NODE): Promise<Run> {
  const child = spawn(cmd, args, { cwd, env: userEnv(node, env), stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] })
  child.stdin?.end(input)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const code = await new Promise<number | null>((resolve, reject) => { child.once('error', reject); child.once('close', resolve) })
  clearTimeout(timer)
  return { code, stdout, stderr }
}

/**
 * Packs the build into `work/pack`: the tarball's path (undefined when none was made), the pack's run, and the
 * errors of the package's own sources in the build (none expected).
 */
export async function packBuild (work: string): Promise<{ tarball: string | undefined; packed: Run; sourceErrors: GraphDiagnostic[] }> {
  const graph = await typeGraph()
  const packDir = join(work, 'pack')
  mkdirSync(packDir)
  const packed = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', packDir], root)
  const file = readdirSync(packDir).find((f) => f.endsWith('.tgz'))
  return { tarball: file === undefined ? undefined : join(packDir, file), packed, sourceErrors: graph.diagnostics.filter((d) => !d.file.startsWith('test/')) }
}
