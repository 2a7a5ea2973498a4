import t from 'tap'
import { PassThrough } from 'node:stream'
import bcrypt from 'bcryptjs'
import { runHashCli, type CliInput } from '../../plugins/toolkit/hash-cli.js'
import { argon2Verify, decodeArgon2Secret } from '../../plugins/toolkit/password-hash.js'

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
    [['hash', '--bcrypt'], 'x'.repeat(80) + '\n', 1, /longer than bcrypt's 72 bytes/],
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
