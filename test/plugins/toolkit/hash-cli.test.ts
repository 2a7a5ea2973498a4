import t from 'tap'
import { PassThrough } from 'node:stream'
import bcrypt from 'bcryptjs'
import { runHashCli, type CliInput } from '../../../plugins/toolkit/hash-cli.js'
import { argon2Verify, decodeArgon2Secret } from '../../../plugins/toolkit/password-hash.js'

function sink (): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough()
  const chunks: Buffer[] = []
  stream.on('data', (c: Buffer) => chunks.push(c))
  return { stream, text: () => Buffer.concat(chunks).toString() }
}

/** A pipe: stdin is not a terminal. */
function pipe (input: string): PassThrough {
  const s = new PassThrough()
  s.end(input)
  return s
}

/** A terminal stand-in: the CLI only relies on isTTY and setRawMode beyond a readable stream. */
function tty (keystrokes: string[]): { stdin: CliInput; modes: boolean[] } {
  const s = new PassThrough() as PassThrough & CliInput
  const modes: boolean[] = []
  s.isTTY = true
  s.setRawMode = (raw: boolean) => { modes.push(raw); return s }
  for (const k of keystrokes) s.write(k)
  return { stdin: s, modes }
}

t.test('bcrypt from a pipe reads the first line only', async (t) => {
  const out = sink(); const err = sink()
  const code = await runHashCli(['hash', '--bcrypt', '--cost', '4'], pipe('s3cret pässword\r\nsecond line\n'), out.stream, err.stream)
  t.equal(code, 0)
  const hash = out.text().trim()
  t.match(hash, /^\$2b\$04\$.{53}$/)
  t.ok(await bcrypt.compare('s3cret pässword', hash))
  t.equal(err.text(), '', 'no prompt on a pipe')
})

t.test('argon2 from a pipe without a trailing newline', async (t) => {
  const out = sink()
  const code = await runHashCli(['hash', '--argon2'], pipe('argon-pw'), out.stream, sink().stream)
  t.equal(code, 0)
  const m = /^hash=(\S+)\nsalt=(\S+)\n$/.exec(out.text())
  t.ok(m, out.text())
  const secret = decodeArgon2Secret(m![1], m![2])
  t.ok(await argon2Verify('argon-pw', secret))
  t.notOk(await argon2Verify('argon-pX', secret))
})

t.test('--env NAME prints a single-quoted line that a shell and a .env file read back as the hash', async (t) => {
  const out = sink(); const err = sink()
  t.equal(await runHashCli(['hash', '--bcrypt', '--env', 'ALICE_HASH'], pipe('alice-pw\n'), out.stream, err.stream), 0)
  const line = out.text()
  t.match(line, /^ALICE_HASH='\$2b\$10\$[./A-Za-z0-9]{53}'\n$/, 'NAME=\'…\' and a line break, nothing else')
  const hash = line.slice("ALICE_HASH='".length, -2)
  t.ok(await bcrypt.compare('alice-pw', hash))
  // Pasted after `export` in a shell, the value is the hash byte for byte: single quotes expand nothing.
  const { execFileSync } = await import('node:child_process')
  t.equal(execFileSync('sh', ['-c', `export ${line}printf %s "$ALICE_HASH"`], { encoding: 'utf8' }), hash, 'read back by sh')
  t.equal(err.text(), '')

  const argon = sink()
  t.equal(await runHashCli(['--argon2', '--env', 'OPS_HASH'], pipe('ops-pw\n'), argon.stream, sink().stream), 0)
  const m = /^OPS_HASH='([A-Za-z0-9+/]{43}=)'\nOPS_HASH_SALT='([A-Za-z0-9+/]{22}==)'\n$/.exec(argon.text())
  t.ok(m, argon.text())
  t.ok(await argon2Verify('ops-pw', decodeArgon2Secret(m![1], m![2])), 'the hash and salt lines verify')
  for (const bad of [[], ['1A'], ['ALICE-HASH'], ['A B'], ["A'"]]) {
    const e = sink(); const o = sink()
    t.equal(await runHashCli(['--bcrypt', '--env', ...bad], pipe('x\n'), o.stream, e.stream), 2, `--env ${bad.join(' ')}`)
    t.equal(e.text(), '--env needs a variable name such as ALICE_HASH (letters, digits, _)\n')
    t.equal(o.text(), '')
  }
})

t.test('terminal: no echo, asked twice, backspace edits', async (t) => {
  const { stdin, modes } = tty(['pa', 'sx\u007fs', '\r', 'pass\r'])
  const out = sink(); const err = sink()
  const code = await runHashCli(['hash', '--bcrypt', '--cost', '4'], stdin, out.stream, err.stream)
  t.equal(code, 0)
  t.ok(await bcrypt.compare('pass', out.text().trim()))
  t.equal(err.text(), 'Password: \nRepeat password: \n', 'prompts only: the password is never echoed')
  t.same(modes, [true, false], 'raw mode on, then restored')
})

t.test('terminal: mismatch, Ctrl-C, Ctrl-D', async (t) => {
  let r = tty(['one\rtwo\r'])
  let err = sink()
  t.equal(await runHashCli(['--bcrypt'], r.stdin, sink().stream, err.stream), 1)
  t.match(err.text(), /the passwords differ/)
  r = tty(['abc\u0003'])
  err = sink()
  t.equal(await runHashCli(['--argon2'], r.stdin, sink().stream, err.stream), 130)
  t.same(r.modes, [true, false], 'raw mode restored after Ctrl-C')
  r = tty(['\u0004'])
  t.equal(await runHashCli(['--argon2'], r.stdin, sink().stream, sink().stream), 1)
})

t.test('bad usage and input', async (t) => {
  const cases: Array<[string[], string, number, RegExp]> = [
    [['hash'], 'x\n', 2, /usage:/],
    [['hash', '--md5'], 'x\n', 2, /unknown argument "--md5"/],
    [['hash', '--bcrypt', '--argon2'], 'x\n', 2, /choose one/],
    [['hash', '--bcrypt', '--cost', '99'], 'x\n', 2, /--cost must be/],
    [['hash', '--bcrypt'], '\n', 1, /empty password/],
    [['hash', '--bcrypt'], '', 1, /empty password/],
    [['hash', '--bcrypt'], 'x'.repeat(80) + '\n', 1, /^the password is longer than bcrypt's 72 bytes \(use --argon2\)\n$/],
    [['hash', '--argon2'], 'y'.repeat(5000), 1, /password too long/],
    [['--help'], '', 2, /usage:/]
  ]
  for (const [argv, input, code, re] of cases) {
    const err = sink(); const out = sink()
    t.equal(await runHashCli(argv, pipe(input), out.stream, err.stream), code, argv.join(' '))
    t.match(err.text(), re)
    t.equal(out.text(), '', 'nothing on stdout')
  }
})

t.test('runs as a program, directly and through a bin symlink', async (t) => {
  const { spawnSync } = await import('node:child_process')
  const { readFileSync, symlinkSync } = await import('node:fs')
  const { join } = await import('node:path')
  const { fileURLToPath } = await import('node:url')
  const cli = fileURLToPath(new URL('../../../plugins/toolkit/hash-cli.ts', import.meta.url))
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { bin: Record<string, string> }
  t.same(pkg.bin, { 'fastify-gatehouse': './dist/plugins/toolkit/hash-cli.js' }, 'the bin is the build of this file')
  t.match(readFileSync(cli, 'utf8'), /^#!\/usr\/bin\/env node\n/, 'shebang kept for the bin')
  // The child runs with this process's TypeScript loader only (no coverage or mock hooks).
  const loader = process.execArgv.filter((a) => a.includes('ts-loader'))
  const link = join(t.testdir({}), 'fastify-gatehouse')
  symlinkSync(cli, link)
  for (const entry of [cli, link]) {
    const run = spawnSync(process.execPath, [...loader, entry, 'hash', '--bcrypt', '--cost', '4'], { input: 'from-a-pipe\n', encoding: 'utf8', timeout: 60_000 })
    t.equal(run.status, 0, run.stderr)
    t.ok(await bcrypt.compare('from-a-pipe', run.stdout.trim()), `a working hash from ${entry === cli ? 'the file' : 'the symlink'}`)
    t.equal(run.stderr, '')
  }
  const usage = spawnSync(process.execPath, [...loader, cli, '--md5'], { input: '', encoding: 'utf8', timeout: 60_000 })
  t.equal(usage.status, 2, 'usage errors exit 2')
  t.match(usage.stderr, /unknown argument "--md5"/)
})
