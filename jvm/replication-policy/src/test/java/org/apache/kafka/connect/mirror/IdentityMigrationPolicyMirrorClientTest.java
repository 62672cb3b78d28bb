package org.apache.kafka.connect.mirror;

import io.mskmigrate.replication.IdentityMigrationReplicationPolicy;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs Kafka's real {@link MirrorClient} helpers (the ones RemoteClusterUtils and operators use) over a fixed
 * topic listing of the target cluster. Lives in Kafka's package only to reach MirrorClient's test constructor
 * and {@code listTopics()} hook; no broker is needed.
 */
class IdentityMigrationPolicyMirrorClientTest {

    /** MirrorClient over a fixed topic list (the Admin client is never used). */
    private static final class ListedTopicsMirrorClient extends MirrorClient {
        private final Set<String> topics;

        ListedTopicsMirrorClient(ReplicationPolicy policy, Set<String> topics) {
            super(null, policy, Map.of());
            this.topics = topics;
        }

        @Override
        Set<String> listTopics() {
            return topics;
        }
    }

    /** Topics on the MSK target after migrating onprem -> msk, with heartbeats that came via dc1 -> onprem. */
    private static final Set<String> TARGET_TOPICS = Set.of(
        "orders", "orders-v2", "payments", "heartbeats", "onprem.heartbeats", "onprem.dc1.heartbeats",
        "onprem.checkpoints.internal", "mm2-offset-syncs.onprem.internal", "__consumer_offsets",
        "mm2-connect-offsets");

    private static ReplicationPolicy loadPolicyLikeMm2(Map<String, String> extra) {
        Map<String, Object> props = new HashMap<>(extra);
        props.put(MirrorClientConfig.REPLICATION_POLICY_CLASS, IdentityMigrationReplicationPolicy.class.getName());
        return new MirrorClientConfig(props).replicationPolicy();
    }

    private static MirrorClient client(Map<String, String> extra) {
        return new ListedTopicsMirrorClient(loadPolicyLikeMm2(extra), TARGET_TOPICS);
    }

    @Test
    void policyIsLoadedAndConfiguredThroughMirrorClientConfig() {
        ReplicationPolicy p = loadPolicyLikeMm2(Map.of(IdentityMigrationReplicationPolicy.TOPIC_RENAMES_CONFIG,
            "orders:orders-v2"));
        assertInstanceOf(IdentityMigrationReplicationPolicy.class, p);
        assertEquals("orders-v2", p.formatRemoteTopic("onprem", "orders"));
        assertEquals("orders", p.upstreamTopic("orders-v2"));
    }

    @Test
    void invalidRenamesFailWhenKafkaInstantiatesThePolicy() {
        Map<String, String> bad = Map.of(IdentityMigrationReplicationPolicy.TOPIC_RENAMES_CONFIG, "a:b,c:b");
        KafkaException e = assertThrows(KafkaException.class, () -> loadPolicyLikeMm2(bad));
        Throwable cause = e instanceof ConfigException ? e : e.getCause();
        assertInstanceOf(ConfigException.class, cause, String.valueOf(e));
        assertTrue(cause.getMessage().contains(IdentityMigrationReplicationPolicy.TOPIC_RENAMES_CONFIG));
    }

    @Test
    void heartbeatTopicsAreFoundByMirrorClient() throws InterruptedException {
        assertEquals(Set.of("heartbeats", "onprem.heartbeats", "onprem.dc1.heartbeats"), client(Map.of()).heartbeatTopics());
    }

    @Test
    void upstreamClustersAreDerivedFromHeartbeats() throws InterruptedException {
        assertEquals(Set.of("onprem", "dc1"), client(Map.of()).upstreamClusters());
    }

    @Test
    void replicationHopsAreCountedFromHeartbeats() throws InterruptedException {
        MirrorClient c = client(Map.of());
        assertEquals(1, c.replicationHops("onprem"));
        assertEquals(2, c.replicationHops("dc1"));
        assertEquals(-1, c.replicationHops("elsewhere"));
    }

    @Test
    void checkpointTopicsUseTheDefaultNames() throws InterruptedException {
        assertEquals(Set.of("onprem.checkpoints.internal"), client(Map.of()).checkpointTopics());
    }

    @Test
    void remoteTopicsAreTheReplicatedOnesWhenTheSourceAliasIsKnown() throws InterruptedException {
        MirrorClient c = client(Map.of(
            "source.cluster.alias", "onprem",
            "offset.storage.topic", "mm2-connect-offsets",
            IdentityMigrationReplicationPolicy.TOPIC_RENAMES_CONFIG, "orders:orders-v2"));
        // "orders" is the pre-rename name: MM2 never writes it, so it is not a remote topic
        assertEquals(Set.of("orders-v2", "payments", "onprem.heartbeats", "onprem.dc1.heartbeats"), c.remoteTopics());
        assertEquals(Set.of("orders-v2", "payments", "onprem.heartbeats", "onprem.dc1.heartbeats"),
            c.remoteTopics("onprem"));
        // hops still come from heartbeats only, and ordinary topics cannot create fake upstream clusters
        assertEquals(Set.of("onprem", "dc1"), c.upstreamClusters());
        assertEquals(1, c.replicationHops("onprem"));
    }

    @Test
    void withoutSourceAliasOnlyHeartbeatsAreRemote() throws InterruptedException {
        assertEquals(Set.of("onprem.heartbeats", "onprem.dc1.heartbeats"), client(Map.of()).remoteTopics());
    }
}
