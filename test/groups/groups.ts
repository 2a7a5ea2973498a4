/**
 * How the suite is split into processes. tap runs the files of this folder (package.json `tap.include`), two at a
 * time (`jobs`), in the order of their names; each runs the test files of its group one after the other in one
 * process (test/helpers/group.ts). A test file belongs to the group whose folder (or file) below is the longest
 * start of its path, so a new test file joins its folder's group without being listed here; `test/` catches the
 * rest. A group's runner is `test/groups/<name>.test.ts`, one line: `await runGroup(import.meta.url)`.
 *
 * Why groups: a test process costs about a CPU second before its first test (Node, the loaders, tap, coverage),
 * and many files are a few small tests on a shared fixture. The heaviest groups come first, so that the two jobs
 * end together. Run one test file alone with `npx tap --disable-coverage <file>`, as before.
 */
export const GROUPS: Record<string, string[]> = {
  '01-package': ['test/package/'],
  '02-types-docs': ['test/types/', 'test/docs/'],
  '03-browser': ['test/e2e/browser/'],
  '04-redis': ['test/e2e/redis/'],
  '05-peers': ['test/e2e/'],
  '06-oauth2': ['test/providers/oauth2/'],
  '07-providers': ['test/providers/'],
  '08-core': ['test/plugins/core/'],
  '09-toolkit': ['test/plugins/toolkit/'],
  // Its own process: taking a CPU profile through the inspector turns V8's coverage to "best effort" (function
  // counts, no branches) for the rest of the process, which would lose the coverage of every file after it.
  '09-toolkit-profiler': ['test/plugins/toolkit/profiler.test.ts'],
  '10-plugins': ['test/plugins/'],
  '11-lib': ['test/lib/'],
  '12-servers-stores': ['test/servers/', 'test/stores/', 'test/hooks/'],
  '13-rest': ['test/']
}
