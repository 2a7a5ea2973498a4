/**
 * Refresh families on a real Redis Cluster (3 masters, 3 replicas) and on Sentinel: two instances share the
 * store; rotation on one, reuse of the rotated token on the other ending the family, its access tokens refused at
 * once on both (each instance with its own connections to the nodes, or to the master the sentinels name).
 */
import t from 'tap'
import { clusterForTests, sentinelsForTests } from '../../helpers/redis-cluster.js'
import { familyAcrossInstances } from '../../helpers/family-reuse.js'

const cluster = await clusterForTests(t, 'refresh families on a Redis Cluster')
if (cluster !== undefined) {
  t.test('Cluster: reuse on instance A ends the family on instance B at once', async (t) => {
    await familyAcrossInstances(t, cluster.address)
  })
}

const sentinels = await sentinelsForTests(t, 'refresh families on Sentinel')
if (sentinels !== undefined) {
  t.test('Sentinel: reuse on instance A ends the family on instance B at once', async (t) => {
    await familyAcrossInstances(t, sentinels.address)
  })
}
