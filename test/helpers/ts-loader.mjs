// The TypeScript loader of the test suite (`node --import ./test/helpers/ts-loader.mjs file.ts`; tap's
// `node-arg`). It registers ts-loader-hooks.mjs, which transpiles each .ts file once and keeps the result in
// .tap/ts-cache/: a test process then loads the sources without loading the TypeScript compiler at all, which
// was about half of the start-up cost of every one of the suite's processes (tap's ts-node loader transpiled
// the whole source tree again in each of them).
import { register } from 'node:module'

register('./ts-loader-hooks.mjs', import.meta.url)
