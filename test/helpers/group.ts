/**
 * Runs a group of test files in one process (test/groups/groups.ts says which): each file is imported inside a
 * subtest of its own, one after the other, and gets that subtest as its `t` (test/helpers/file-tap.mjs), so that
 * its top-level subtests, hooks, teardowns and timeouts stay within the file, as when it was a process of its own.
 */
import t from 'tap'
import { readdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { GROUPS, NODE_INDEPENDENT } from '../groups/groups.js'
import { cpuSeconds } from './cpu-time.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const RUNNERS = 'test/groups'

/** Every `*.test.ts` of the suite except the group runners, relative to the project root, in tap's order. */
export function allTestFiles (): string[] {
  return readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
    .map((f) => `test/${f}`)
    .filter((f) => f.endsWith('.test.ts') && !f.startsWith(`${RUNNERS}/`))
    .sort((a, b) => a.localeCompare(b, 'en'))
}

/** The group a test file runs in: the one with the longest folder or file that starts its path. */
export function groupOf (file: string): string | undefined {
  let best: { name: string; length: number } | undefined
  for (const [name, starts] of Object.entries(GROUPS)) {
    for (const start of starts) {
      if (file.startsWith(start) && (best === undefined || start.length > best.length)) best = { name, length: start.length }
    }
  }
  return best?.name
}

/** The test files of group `name`. */
export function filesOf (name: string): string[] {
  return allTestFiles().filter((f) => groupOf(f) === name)
}

/**
 * Why `file` is skipped in this run, or undefined: a Node-independent file (groups.ts) when `.ci/run` says it
 * runs it on another Node version in the same CI run (`GATEHOUSE_NODE_INDEPENDENT_ELSEWHERE=<that version>`).
 */
export function skipReason (file: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const elsewhere = env.GATEHOUSE_NODE_INDEPENDENT_ELSEWHERE
  if (elsewhere === undefined || elsewhere === '' || !NODE_INDEPENDENT.some((start) => file.startsWith(start))) return undefined
  return `Node-independent, runs on Node ${elsewhere} in this CI run (GATEHOUSE_NODE_INDEPENDENT_ELSEWHERE, set by .ci/run)`
}

/** The group names with a runner file in test/groups/. */
export function runnerNames (): string[] {
  return readdirSync(join(root, RUNNERS)).filter((f) => f.endsWith('.test.ts')).map((f) => f.slice(0, -'.test.ts'.length)).sort()
}

const fileTests = new Map<string, unknown>()
;(globalThis as Record<symbol, unknown>)[Symbol.for('gatehouse.test-group')] = fileTests

/** Runs the group whose runner is `runnerUrl` (the runner's `import.meta.url`). */
export async function runGroup (runnerUrl: string): Promise<void> {
  const name = basename(fileURLToPath(runnerUrl), '.test.ts')
  if (GROUPS[name] === undefined) throw new Error(`${RUNNERS}/${name}.test.ts: no group "${name}" in ${RUNNERS}/groups.ts`)
  const files = filesOf(name)
  // Each file keeps the time limit it had as a process of its own (tap's `timeout`, in seconds, or what the file
  // sets with `t.setTimeout`); the process's limit, which tap enforces from outside, is moved along: the running
  // file's limit plus those of the files still to run.
  const perFile = Number(process.env.TAP_TIMEOUT ?? 30) * 1000
  // (test/suite-rules.test.ts checks that every group has its runner and every test file a group.)
  // The whole process's cost, when it is over (the files' own lines miss what runs after them: a browser they
  // shared, writing the coverage).
  process.on('exit', () => {
    const spent = cpuSeconds()
    process.stderr.write(`# group ${name}: cpu ${spent.own.toFixed(1)} s + ${spent.children.toFixed(1)} s in child processes\n`)
  })
  if (files.length === 0) t.test(name, { skip: `no test file in ${GROUPS[name].join(', ')} yet` }, async () => {})
  for (const [i, file] of files.entries()) {
    const skip = skipReason(file)
    if (skip !== undefined) {
      t.test(file, { skip }, async () => {})
      continue
    }
    const url = pathToFileURL(join(root, file)).href
    const later = perFile * (files.length - i - 1)
    const before = cpuSeconds()
    await t.test(file, { timeout: perFile }, async (sub) => {
      t.setTimeout(perFile + later)
      const ownSetTimeout = sub.setTimeout.bind(sub)
      sub.setTimeout = (ms: number) => { t.setTimeout(ms + later); ownSetTimeout(ms) }
      fileTests.set(url, sub)
      await import(url)
    })
    const after = cpuSeconds()
    t.comment(`cpu ${(after.own - before.own).toFixed(1)} s + ${(after.children - before.children).toFixed(1)} s in child processes: ${file}`)
  }
}
