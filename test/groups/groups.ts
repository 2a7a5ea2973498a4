/**
 * How the suite is split into processes. tap runs the files of this folder (package.json `tap.include`), three at
 * a time (`jobs`), in the order of their names; each runs the test files of its group one after the other in one
 * process (test/helpers/group.ts). A test file belongs to the group whose folder (or file) below is the longest
 * start of its path, so a new test file joins its folder's group without being listed here; `test/` catches the
 * rest. A group's runner is `test/groups/<name>.test.ts`, one line: `await runGroup(import.meta.url)`.
 *
 * Why groups: a test process costs about a CPU second before its first test (Node, the loaders, tap, coverage),
 * and most files are a few small tests on a fixture of their own. The groups are numbered by their CPU time,
 * heaviest first (each file's is printed as it ends: `# cpu … s + … s in child processes: <file>`), so that the
 * jobs end together. Run one test file alone with `npx tap --disable-coverage <file>`, as before.
 */
export const GROUPS: Record<string, string[]> = {
  // npm pack of a fresh clone (a full tsc build), three npm installs and a dozen apps, one after the other.
  '01-package': ['test/package/'],
  // typedoc builds the site, Chromium opens every page; apart from the other browser tests so that the two jobs
  // share out the browser work.
  '02-browser-site': ['test/e2e/browser/site.test.ts'],
  '03-browser': ['test/e2e/browser/'],
  '04-types-docs': ['test/types/', 'test/docs/'],
  '05-core': ['test/plugins/core/'],
  '06-redis': ['test/e2e/redis/'],
  '07-rest': ['test/'],
  '08-providers': ['test/providers/'],
  '09-lib': ['test/lib/'],
  '10-peers': ['test/e2e/'],
  '11-oauth2': ['test/providers/oauth2/'],
  '12-plugins': ['test/plugins/'],
  '13-toolkit': ['test/plugins/toolkit/'],
  '14-servers-stores': ['test/servers/', 'test/stores/', 'test/hooks/'],
  // Its own process: taking a CPU profile through the inspector turns V8's coverage to "best effort" (function
  // counts, no branches) for the rest of the process, which would lose the coverage of every file after it.
  '15-toolkit-profiler': ['test/plugins/toolkit/profiler.test.ts'],
  // SAML against SimpleSAMLphp (php-cgi and lighttpd, installed by .ci/run): a group of its own, so that its
  // servers start once per process. Not numbered yet: give it its place by CPU time once its files are measured.
  saml: ['test/e2e/saml/']
}

/**
 * Test files (or folders) whose work does not depend on the Node version running the suite: the packed tarball and
 * its scratch apps (which run the README's tutorial on Node 22.12.0, the newest 22 and 24 themselves, whatever
 * Node runs the suite), the TypeScript compiler over the type tests, the docs' examples and the option types, and
 * the documentation site (TypeDoc and Chromium). `npm test` runs them; `.ci/run` runs them on one Node only (the
 * first it tests with that `engines` allows) and sets `GATEHOUSE_NODE_INDEPENDENT_ELSEWHERE` (that version) for the
 * others, where each of them is a skipped test that says so.
 */
export const NODE_INDEPENDENT: string[] = [
  'test/package/scratch-app.test.ts',
  'test/types/',
  'test/docs/',
  'test/e2e/browser/site.test.ts'
]
