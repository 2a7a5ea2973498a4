import t from 'tap'
import { parseIp, isPublicIp, ipMatches, compileIpMatcher, formatIp } from '../../lib/ip.js'

t.test('parseIp accepts the usual spellings', async (t) => {
  t.same(parseIp('1.2.3.4'), { family: 4, bytes: Uint8Array.from([1, 2, 3, 4]) })
  t.same(parseIp(' 10.0.0.1 '), { family: 4, bytes: Uint8Array.from([10, 0, 0, 1]) })
  t.same(parseIp('1.2.3.4:8080'), { family: 4, bytes: Uint8Array.from([1, 2, 3, 4]) })
  t.same(parseIp('::ffff:10.1.2.3'), { family: 4, bytes: Uint8Array.from([10, 1, 2, 3]) }, 'mapped → v4')
  t.same(parseIp('::ffff:a01:203'), { family: 4, bytes: Uint8Array.from([10, 1, 2, 3]) }, 'mapped hex → v4')
  t.same(parseIp('[::ffff:10.1.2.3]:443'), { family: 4, bytes: Uint8Array.from([10, 1, 2, 3]) })
  const loop = parseIp('::1')
  t.equal(loop?.family, 6)
  t.equal(loop?.bytes[15], 1)
  t.equal(formatIp(parseIp('[2001:DB8::1]')!), '2001:db8:0:0:0:0:0:1')
  t.equal(formatIp(parseIp('fe80::1%eth0')!), 'fe80:0:0:0:0:0:0:1', 'zone stripped')
  t.equal(formatIp(parseIp('[fe80::1%25eth0]:80')!), 'fe80:0:0:0:0:0:0:1')
  t.equal(formatIp(parseIp('1:2:3:4:5:6:7:8')!), '1:2:3:4:5:6:7:8')
  t.equal(formatIp(parseIp('1::')!), '1:0:0:0:0:0:0:0')
  t.equal(formatIp(parseIp('64:ff9b::1.2.3.4')!), '64:ff9b:0:0:0:0:102:304', 'embedded v4 tail')
})

t.test('parseIp refuses garbage', async (t) => {
  for (const bad of ['', ' ', 'localhost', '1.2.3', '256.1.1.1', '01.2.3.4', '0x1.1.1.1', '1.2.3.4.5',
    '1:2:3:4:5:6:7:8:9', ':::', '[::1', '[::1]x', '[::1]:99999999', 'unknown', '1.2.3.4, 5.6.7.8',
    '<script>', 'x'.repeat(1000), '::ffff:999.1.1.1']) {
    t.equal(parseIp(bad), null, JSON.stringify(bad.slice(0, 30)))
  }
  t.equal(parseIp(undefined as unknown as string), null, 'non-string')
})

t.test('isPublicIp', async (t) => {
  for (const pub of ['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1',
    '11.0.0.1', '::ffff:8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001::1', '2001::1', '2002:808:808::1']) {
    t.ok(isPublicIp(pub), `${pub} public`)
  }
  for (const priv of ['10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.1.1',
    '127.0.0.1', '127.255.0.1', '169.254.1.1', '100.64.0.1', '100.127.255.255', '0.0.0.0', '0.1.2.3',
    '224.0.0.1', '239.255.255.255', '255.255.255.255', '240.0.0.1', '192.0.2.5', '198.51.100.7',
    '203.0.113.9', '198.18.0.1', '192.0.0.8', '::', '::1', 'fe80::1', 'febf::1', 'fc00::1', 'fd12:3456::1',
    'ff02::1', '2001:db8::1', '3fff::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:192.168.0.1',
    '[::ffff:169.254.169.254]', '::127.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::1', '2002:a00:1::',
    'garbage', '', '1.2.3', 'fe80::1%eth0']) {
    t.notOk(isPublicIp(priv), `${priv} not public`)
  }
})

t.test('ipMatches: full address, prefix, CIDR', async (t) => {
  t.ok(ipMatches('10.0.0.1', '10.0.0.1'))
  t.notOk(ipMatches('10.0.0.10', '10.0.0.1'), 'full address is not a prefix')
  t.ok(ipMatches('::ffff:10.0.0.1', '10.0.0.1'), 'mapped matches v4 entry')
  t.ok(ipMatches('10.0.0.1', '::ffff:10.0.0.1'), 'v4 matches mapped entry')
  t.ok(ipMatches('2001:db8:0:0::1', '2001:DB8::1'), 'v6 spellings')
  t.ok(ipMatches('192.168.5.4', '192.168.'))
  t.notOk(ipMatches('192.169.5.4', '192.168.'))
  t.ok(ipMatches('::ffff:192.168.5.4', '192.168.'), 'prefix on mapped')
  t.ok(ipMatches('2001:db8::5', '2001:db8:'))
  t.ok(ipMatches('10.20.30.40', '10.0.0.0/8'))
  t.notOk(ipMatches('11.20.30.40', '10.0.0.0/8'))
  t.ok(ipMatches('172.31.0.1', '172.16.0.0/12'))
  t.notOk(ipMatches('172.32.0.1', '172.16.0.0/12'))
  t.ok(ipMatches('1.2.3.4', '0.0.0.0/0'))
  t.notOk(ipMatches('::1', '0.0.0.0/0'), 'family must match')
  t.ok(ipMatches('2001:db8:ffff::1', '2001:db8::/32'))
  t.notOk(ipMatches('2001:db9::1', '2001:db8::/32'))
  t.ok(ipMatches('10.1.1.1', '::ffff:10.0.0.0/104'), 'mapped CIDR')
  t.ok(ipMatches('::1', '::1/128'))
  t.notOk(ipMatches('garbage', '0.0.0.0/0'))
  t.notOk(ipMatches('', '10.'))
  for (const badEntry of ['', '10.0.0.0/33', '10.0.0.0/x', '::/129', 'host.example', '10.0.0.0/8/8', '/8']) {
    t.notOk(ipMatches('10.0.0.1', badEntry), `bad entry ${JSON.stringify(badEntry)}`)
  }
})

t.test('compileIpMatcher validates entries and matches any', async (t) => {
  const m = compileIpMatcher(['127.0.0.1', '::1', '10.0.0.0/8', '192.168.1.'])
  t.ok(m('127.0.0.1'))
  t.ok(m('::ffff:127.0.0.1'))
  t.ok(m('[::1]'))
  t.ok(m('10.9.9.9'))
  t.ok(m('192.168.1.77'))
  t.notOk(m('192.168.2.77'))
  t.notOk(m('8.8.8.8'))
  t.notOk(m('not-an-ip'))
  t.throws(() => compileIpMatcher(['10.0.0.0/40'], 'onlyFrom.allow'), { code: 'GATEHOUSE_OPTION', option: 'onlyFrom.allow' })
  t.throws(() => compileIpMatcher(['example.com']), { code: 'GATEHOUSE_OPTION', option: 'allow' })
  t.notOk(compileIpMatcher([])('127.0.0.1'), 'empty list matches nothing')
})

t.test('prefixes on whole octets/groups and textual prefixes; cached answers stay correct', async (t) => {
  const m = compileIpMatcher(['10.', '172.16.5.', '2001:db8:', '192.168.1', 'fe80::'])
  t.ok(m('10.200.1.1'))
  t.ok(m('::ffff:10.200.1.1'))
  t.notOk(m('110.0.0.1'))
  t.ok(m('172.16.5.200'))
  t.notOk(m('172.16.50.1'))
  t.ok(m('2001:db8:1::1'))
  t.notOk(m('2001:db80::1'))
  t.ok(m('192.168.1.7'), 'textual prefix')
  t.ok(m('192.168.100.7'), 'textual prefix is textual: write "192.168.1." for the /24')
  t.notOk(m('fe80::1'), 'a prefix is compared with the uncompressed form (fe80:0:0:…)')
  t.ok(compileIpMatcher(['fe80:0:'])('fe80::1'))
  // Many distinct addresses: the bounded cache is cleared and refilled without changing any answer.
  let allowed = 0
  for (let i = 0; i < 10_000; i++) if (m(`10.${(i >> 8) & 255}.${i & 255}.1`)) allowed++
  t.equal(allowed, 10_000)
  let publicGarbage = 0
  for (let i = 0; i < 5_000; i++) if (isPublicIp(`garbage-${i}`)) publicGarbage++
  t.equal(publicGarbage, 0, 'garbage flood')
  t.ok(isPublicIp('8.8.8.8'))
  t.notOk(isPublicIp('10.0.0.1'))
})
