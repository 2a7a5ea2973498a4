// What `import t from 'tap'` gives a test file (ts-loader-hooks.mjs resolves `tap` imported from a `.test.ts` file
// to this module, one instance per file: `?for=<the file's URL>`). Run alone, a file gets tap's root test, as it
// would without this module. Run inside a group process (test/helpers/group.ts), it gets the subtest the group
// opened for it, so that everything the file does at its top level (subtests, `t.beforeEach`, `t.teardown`,
// `t.setTimeout`, `t.plan`) stays within that file, as when it was a process of its own.
import root from 'tap'

const file = new URL(import.meta.url).searchParams.get('for')
const group = globalThis[Symbol.for('gatehouse.test-group')]

export default group?.get(file) ?? root
