import { runGroup } from '../helpers/group.js'

await runGroup(import.meta.url)
