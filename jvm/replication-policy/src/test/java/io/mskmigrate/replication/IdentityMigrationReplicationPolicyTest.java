package io.mskmigrate.replication;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.mirror.DefaultReplicationPolicy;
import org.apache.kafka.connect.mirror.ReplicationPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IdentityMigrationReplicationPolicyTest {

    private static final String RENAMES = IdentityMigrationReplicationPolicy.TOPIC_RENAMES_CONFIG;

    /** A policy configured the way the MM2 connectors configure it (source.cluster.alias is always set). */
    private static IdentityMigrationReplicationPolicy policy(String... keyValues) {
        Map<String, Object> props = new HashMap<>();
        props.put("source.cluster.alias", "onprem");
        props.put("target.cluster.alias", "msk");
        for (int i = 0; i < keyValues.length; i += 2) {
            props.put(keyValues[i], keyValues[i + 1]);
        }
        IdentityMigrationReplicationPolicy p = new IdentityMigrationReplicationPolicy();
        p.configure(props);
        return p;
    }

    private static IdentityMigrationReplicationPolicy unconfigured() {
        IdentityMigrationReplicationPolicy p = new IdentityMigrationReplicationPolicy();
        p.configure(Map.of());
        return p;
    }

    /** Asserts configure() rejects the renames value with a message naming the key and the given fragments. */
    private static void assertRenamesRejected(String renames, String... messageFragments) {
        ConfigException e = assertThrows(ConfigException.class, () -> policy(RENAMES, renames),
            () -> "renames '" + renames + "' should be rejected");
        assertTrue(e.getMessage().contains(RENAMES), () -> "message should name the key: " + e.getMessage());
        for (String fragment : messageFragments) {
            assertTrue(e.getMessage().contains(fragment),
                () -> "message should contain '" + fragment + "': " + e.getMessage());
        }
    }

    // ---- naming ------------------------------------------------------------------------------------

    @Test
    void ordinaryTopicKeepsItsNameOnTarget() {
        IdentityMigrationReplicationPolicy p = policy();
        for (String topic : List.of("orders", "payments.v1", "a_b-c.d", "service-heartbeats", "myheartbeats")) {
            assertEquals(topic, p.formatRemoteTopic("onprem", topic));
            assertEquals(topic, p.upstreamTopic(topic));
            assertEquals(topic, p.originalTopic(topic));
            assertFalse(p.isHeartbeatsTopic(topic), topic);
        }
    }

    @Test
    void heartbeatsAreAliasPrefixedAndTracedToTheirSource() {
        IdentityMigrationReplicationPolicy p = policy();
        String remote = p.formatRemoteTopic("onprem", "heartbeats");
        assertEquals("onprem.heartbeats", remote);
        assertEquals("onprem", p.topicSource(remote));
        assertEquals("heartbeats", p.upstreamTopic(remote));
        assertEquals("heartbeats", p.originalTopic(remote));
        assertTrue(p.isHeartbeatsTopic("heartbeats"));
        assertTrue(p.isHeartbeatsTopic(remote));
        assertFalse(p.isInternalTopic(remote));
        // the local heartbeats topic has no source
        assertNull(p.topicSource("heartbeats"));
    }

    @Test
    void multiHopHeartbeatsAreWalkedOneAliasAtATime() {
        IdentityMigrationReplicationPolicy p = policy();
        String twoHops = p.formatRemoteTopic("dc2", p.formatRemoteTopic("dc1", "heartbeats"));
        assertEquals("dc2.dc1.heartbeats", twoHops);
        assertEquals("dc2", p.topicSource(twoHops));
        assertEquals("dc1.heartbeats", p.upstreamTopic(twoHops));
        assertEquals("dc1", p.topicSource(p.upstreamTopic(twoHops)));
        assertEquals("heartbeats", p.originalTopic(twoHops));
        assertTrue(p.isHeartbeatsTopic(twoHops));
    }

    @Test
    void heartbeatsPrefixMatchesDefaultReplicationPolicy() {
        DefaultReplicationPolicy kafkaDefault = new DefaultReplicationPolicy();
        IdentityMigrationReplicationPolicy p = policy();
        for (String hb : List.of("heartbeats", "dc1.heartbeats")) {
            String ours = p.formatRemoteTopic("onprem", hb);
            assertEquals(kafkaDefault.formatRemoteTopic("onprem", hb), ours);
            assertEquals(kafkaDefault.topicSource(ours), p.topicSource(ours));
            assertEquals(kafkaDefault.upstreamTopic(ours), p.upstreamTopic(ours));
        }
    }

    @Test
    void topicsMerelyEndingInHeartbeatsAreOrdinary() {
        IdentityMigrationReplicationPolicy p = policy();
        for (String topic : List.of("myheartbeats", "service-heartbeats", "heartbeats2", ".heartbeats")) {
            assertFalse(p.isHeartbeatsTopic(topic), topic);
            assertEquals(topic, p.formatRemoteTopic("onprem", topic), topic);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"orders", "onprem.heartbeats", "dc2.dc1.heartbeats", "heartbeats", "orders-eu",
        "payments_eu", "x.y.z", "__consumer_offsets", "mm2-offset-syncs.msk.internal", "onprem.checkpoints.internal"})
    void upstreamTopicIsNeverNullForReplicatedTopics(String topic) {
        IdentityMigrationReplicationPolicy p = policy(RENAMES, "orders:orders-v2");
        assertNotNull(p.upstreamTopic(topic));
        assertNotNull(p.originalTopic(topic));
        // and the same for everything this policy itself produces on the target
        String remote = p.formatRemoteTopic("onprem", topic);
        assertNotNull(p.upstreamTopic(remote));
        assertEquals(topic, p.upstreamTopic(remote), "upstreamTopic undoes formatRemoteTopic");
    }

    @Test
    void topicSourceIsTheConfiguredSourceClusterAliasForOrdinaryTopics() {
        // Like Kafka's IdentityReplicationPolicy: MirrorSourceConnector finds the target topics it owns with
        // sourceAlias.equals(topicSource(t)); without it, topic configs and new partitions are never synced.
        IdentityMigrationReplicationPolicy p = policy();
        assertEquals("onprem", p.topicSource("orders"));
        assertEquals("onprem", p.topicSource(p.formatRemoteTopic("onprem", "orders")));
    }

    @Test
    void topicSourceIsNullForOrdinaryTopicsWhenNoSourceAliasIsConfigured() {
        IdentityMigrationReplicationPolicy p = unconfigured();
        assertNull(p.topicSource("orders"));
        assertEquals("orders", p.upstreamTopic("orders"));
        assertEquals("onprem", p.topicSource("onprem.heartbeats"));
    }

    @Test
    void internalTopicsHaveNoSource() {
        IdentityMigrationReplicationPolicy p = policy();
        for (String topic : List.of("__consumer_offsets", "mm2-offset-syncs.msk.internal", "msk.checkpoints.internal")) {
            assertNull(p.topicSource(topic), topic);
        }
    }

    @Test
    void nullTopicsAreHandledWithoutExceptions() {
        IdentityMigrationReplicationPolicy p = policy();
        assertNull(p.formatRemoteTopic("onprem", null));
        assertNull(p.topicSource(null));
        assertNull(p.upstreamTopic(null));
        assertNull(p.originalTopic(null));
        assertFalse(p.isHeartbeatsTopic(null));
        assertFalse(p.isInternalTopic(null));
        assertFalse(p.isCheckpointsTopic(null));
    }

    // ---- internal topics ---------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"__consumer_offsets", "__transaction_state", "__amazon_msk_canary", ".hidden",
        "mm2-offset-syncs.onprem.internal", "mm2-offset-syncs.msk.internal", "onprem.checkpoints.internal",
        "mm2-configs.msk.internal", "mm2-offsets.msk.internal", "mm2-status.msk.internal", "connect-offsets-internal",
        "anything.internal"})
    void internalTopicsFollowKafkaDefaults(String topic) {
        IdentityMigrationReplicationPolicy p = policy();
        assertTrue(p.isInternalTopic(topic), topic);
        assertNull(p.topicSource(topic), topic);
    }

    @ParameterizedTest
    @ValueSource(strings = {"orders", "heartbeats", "onprem.heartbeats", "internal", "orders.internally",
        "_schemas", "connect-offsets"})
    void ordinaryAndHeartbeatsTopicsAreNotInternal(String topic) {
        assertFalse(policy().isInternalTopic(topic), topic);
    }

    @Test
    void internalSemanticsMatchKafka39DefaultReplicationPolicy() {
        IdentityMigrationReplicationPolicy p = policy();
        ReplicationPolicy kafka39Semantics = new ReplicationPolicy() {
            // the Kafka 3.9 interface defaults, written out so the test means the same on Kafka 4.x
            @Override public String formatRemoteTopic(String a, String t) { return t; }
            @Override public String topicSource(String t) { return null; }
            @Override public String upstreamTopic(String t) { return null; }
            @Override public boolean isMM2InternalTopic(String t) { return t.endsWith(".internal"); }
            @Override public boolean isInternalTopic(String t) {
                return isMM2InternalTopic(t) || t.startsWith("__") || t.startsWith(".")
                    || t.endsWith("-internal") || t.endsWith(".internal");
            }
        };
        for (String t : List.of("__consumer_offsets", "__transaction_state", ".x", "a.internal", "a-internal",
                "mm2-offset-syncs.s.internal", "s.checkpoints.internal", "orders", "heartbeats", "s.heartbeats",
                "internal", "_schemas")) {
            assertEquals(kafka39Semantics.isInternalTopic(t), p.isInternalTopic(t), t);
            assertEquals(kafka39Semantics.isMM2InternalTopic(t), p.isMM2InternalTopic(t), t);
        }
    }

    @Test
    void connectWorkerTopicsAreInternalWhenNamed() {
        IdentityMigrationReplicationPolicy p = policy(
            "offset.storage.topic", "mm2-connect-offsets",
            "config.storage.topic", "mm2-connect-configs",
            "status.storage.topic", "mm2-connect-status",
            IdentityMigrationReplicationPolicy.INTERNAL_TOPICS_CONFIG, " connect-offsets , connect-configs,connect-status ");
        for (String t : List.of("mm2-connect-offsets", "mm2-connect-configs", "mm2-connect-status",
                "connect-offsets", "connect-configs", "connect-status")) {
            assertTrue(p.isInternalTopic(t), t);
            assertNull(p.topicSource(t), t);
        }
        assertFalse(p.isInternalTopic("orders"));
    }

    // ---- checkpoints / offset-syncs / separator ----------------------------------------------------

    @Test
    void checkpointAndOffsetSyncTopicNamesAreTheDefaults() {
        DefaultReplicationPolicy kafkaDefault = new DefaultReplicationPolicy();
        for (IdentityMigrationReplicationPolicy p : List.of(unconfigured(), policy(),
                policy("replication.policy.separator", "_"))) {
            assertEquals("onprem.checkpoints.internal", p.checkpointsTopic("onprem"));
            assertEquals("mm2-offset-syncs.onprem.internal", p.offsetSyncsTopic("onprem"));
            assertEquals(kafkaDefault.checkpointsTopic("onprem"), p.checkpointsTopic("onprem"));
            assertEquals(kafkaDefault.offsetSyncsTopic("onprem"), p.offsetSyncsTopic("onprem"));
            assertEquals("heartbeats", p.heartbeatsTopic());
            assertTrue(p.isCheckpointsTopic("onprem.checkpoints.internal"));
            assertFalse(p.isCheckpointsTopic("orders"));
            assertTrue(p.isInternalTopic(p.checkpointsTopic("onprem")));
            assertTrue(p.isInternalTopic(p.offsetSyncsTopic("onprem")));
        }
    }

    @Test
    void migrationNameIsPutBeforeTheAliasInCheckpointAndOffsetSyncTopicNames() {
        IdentityMigrationReplicationPolicy orders = policy("replication.policy.migration.name", "orders-mig");
        IdentityMigrationReplicationPolicy payments = policy("replication.policy.migration.name", "payments");
        assertEquals("orders-mig.onprem.checkpoints.internal", orders.checkpointsTopic("onprem"));
        assertEquals("mm2-offset-syncs.orders-mig.onprem.internal", orders.offsetSyncsTopic("onprem"));
        assertNotEquals(orders.checkpointsTopic("onprem"), payments.checkpointsTopic("onprem"));
        assertNotEquals(orders.offsetSyncsTopic("onprem"), payments.offsetSyncsTopic("onprem"));
        assertEquals("orders-mig", orders.migrationName());
        for (String t : List.of(orders.checkpointsTopic("onprem"), orders.offsetSyncsTopic("onprem"))) {
            assertTrue(orders.isInternalTopic(t), t);
            assertTrue(orders.isMM2InternalTopic(t), t);
            assertNull(orders.topicSource(t), t);
        }
        assertTrue(orders.isCheckpointsTopic(orders.checkpointsTopic("onprem")));
        // heartbeats and ordinary topics are untouched
        assertEquals("onprem.heartbeats", orders.formatRemoteTopic("onprem", "heartbeats"));
        assertEquals("orders", orders.formatRemoteTopic("onprem", "orders"));
        // blank means unset: Kafka's names
        assertEquals("onprem.checkpoints.internal",
            policy("replication.policy.migration.name", " ").checkpointsTopic("onprem"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a.b", "a b", "x/y",
        "0123456789012345678901234567890123456789012345678901234567890123456789012"})
    void invalidMigrationNameIsRejectedAtConfigure(String name) {
        ConfigException e = assertThrows(ConfigException.class,
            () -> policy("replication.policy.migration.name", name));
        assertTrue(e.getMessage().contains("replication.policy.migration.name"), e.getMessage());
    }

    @Test
    void customSeparatorIsUsedOnlyForTheHeartbeatsPrefix() {
        IdentityMigrationReplicationPolicy p = policy("replication.policy.separator", "_");
        assertEquals("onprem_heartbeats", p.formatRemoteTopic("onprem", "heartbeats"));
        assertEquals("onprem", p.topicSource("onprem_heartbeats"));
        assertEquals("heartbeats", p.upstreamTopic("onprem_heartbeats"));
        assertTrue(p.isHeartbeatsTopic("onprem_heartbeats"));
        // with '_' the dotted form is an ordinary topic
        assertFalse(p.isHeartbeatsTopic("onprem.heartbeats"));
        assertEquals("orders", p.formatRemoteTopic("onprem", "orders"));
        assertEquals("onprem.checkpoints.internal", p.checkpointsTopic("onprem"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "/", "a b", "::"})
    void invalidSeparatorIsRejectedAtConfigure(String separator) {
        ConfigException e = assertThrows(ConfigException.class, () -> policy("replication.policy.separator", separator));
        assertTrue(e.getMessage().contains("replication.policy.separator"), e.getMessage());
    }

    // ---- renames -----------------------------------------------------------------------------------

    @Test
    void renamedTopicIsWrittenUnderItsNewNameAndTracedBackToTheOriginal() {
        IdentityMigrationReplicationPolicy p = policy(RENAMES, "orders:orders-v2, audit : audit-log");
        assertEquals(Map.of("orders", "orders-v2", "audit", "audit-log"), p.topicRenames());
        assertEquals("orders-v2", p.formatRemoteTopic("onprem", "orders"));
        assertEquals("audit-log", p.formatRemoteTopic("onprem", "audit"));
        assertEquals("orders", p.upstreamTopic("orders-v2"));
        assertEquals("orders", p.originalTopic("orders-v2"));
        assertEquals("onprem", p.topicSource("orders-v2"));
        // the un-renamed topics are untouched
        assertEquals("payments", p.formatRemoteTopic("onprem", "payments"));
        assertEquals("payments", p.upstreamTopic("payments"));
    }

    @Test
    void sourceNameOfARenamedTopicIsNotARemoteTopic() {
        IdentityMigrationReplicationPolicy p = policy(RENAMES, "orders:orders-v2");
        // MM2 never writes "orders" to the target, so it must not be claimed as replicated from onprem
        assertNull(p.topicSource("orders"));
        assertEquals("orders", p.upstreamTopic("orders"));
    }

    @Test
    void blankOrAbsentRenamesMeanNoRenames() {
        assertTrue(policy().topicRenames().isEmpty());
        assertTrue(policy(RENAMES, "").topicRenames().isEmpty());
        assertTrue(policy(RENAMES, "   ").topicRenames().isEmpty());
    }

    @Test
    void renamesMayAlsoBeGivenAsAList() {
        IdentityMigrationReplicationPolicy p = new IdentityMigrationReplicationPolicy();
        Map<String, Object> props = new LinkedHashMap<>();
        props.put(RENAMES, List.of("a:b", "c:d"));
        p.configure(props);
        assertEquals(Map.of("a", "b", "c", "d"), p.topicRenames());
    }

    @ParameterizedTest
    @ValueSource(strings = {"orders", "orders:", ":orders", " : ", "a:b:c", "a:b,,c:d", "a:b,", ",a:b", "a=b"})
    void malformedRenameEntriesAreRejectedAtConfigure(String renames) {
        assertRenamesRejected(renames);
    }

    @Test
    void malformedRenameErrorsNameTheBadEntry() {
        assertRenamesRejected("good:fine,orders", "'orders'", "source:target");
        assertRenamesRejected("good:fine,orders:", "'orders:'", "empty target");
        assertRenamesRejected(":orders", "empty source");
        assertRenamesRejected("a:b,,c:d", "empty entry");
    }

    @ParameterizedTest
    @ValueSource(strings = {"my topic:b", "a:my/topic", "a:.", "..:b", "caf\u00e9:b", "a:b*", "a:b#c"})
    void renameRulesWithInvalidTopicNamesAreRejectedAtConfigure(String renames) {
        assertRenamesRejected(renames, "not a valid Kafka topic name");
    }

    @Test
    void renameTargetsLongerThan249CharactersAreRejectedAtConfigure() {
        String longest = "t".repeat(249);
        assertEquals(longest, policy(RENAMES, "a:" + longest).formatRemoteTopic("onprem", "a"));
        assertRenamesRejected("a:" + longest + "x", "not a valid Kafka topic name", "249");
    }

    @Test
    void renameRulesWithDuplicateSourcesAreRejectedAtConfigure() {
        assertRenamesRejected("orders:orders-v2,orders:orders-v3", "'orders'", "renamed twice");
    }

    @Test
    void renameRulesWithDuplicateTargetsAreRejectedAtConfigure() {
        assertRenamesRejected("orders:all-orders,orders-eu:all-orders", "'orders:all-orders'",
            "'orders-eu:all-orders'", "'all-orders'");
    }

    @Test
    void renameRulesWhoseTargetsCollideInKafkaAreRejectedAtConfigure() {
        assertRenamesRejected("a:sales.eu,b:sales_eu", "collide");
    }

    @Test
    void chainedOrCyclicRenameRulesAreRejectedAtConfigure() {
        assertRenamesRejected("a:b,b:c", "'a:b'", "'b:c'", "chained");
        assertRenamesRejected("b:c,a:b", "chained");
        assertRenamesRejected("a:b,b:a", "chained");
        assertRenamesRejected("a:a", "to itself");
    }

    @ParameterizedTest
    @ValueSource(strings = {"heartbeats:hb", "hb:heartbeats", "onprem.heartbeats:hb", "hb:msk.heartbeats"})
    void renamingToOrFromHeartbeatsIsRejectedAtConfigure(String renames) {
        assertRenamesRejected(renames, "heartbeats topic");
    }

    @Test
    void heartbeatsRuleFollowsTheConfiguredSeparator() {
        ConfigException e = assertThrows(ConfigException.class,
            () -> policy("replication.policy.separator", "_", RENAMES, "x:onprem_heartbeats"));
        assertTrue(e.getMessage().contains("heartbeats topic"), e.getMessage());
        // with '_' as separator, "onprem.heartbeats" is an ordinary name and may be a target
        assertEquals("onprem.heartbeats",
            policy("replication.policy.separator", "_", RENAMES, "x:onprem.heartbeats").formatRemoteTopic("s", "x"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"__consumer_offsets:offsets", "orders:__orders", "orders:.orders",
        "mm2-offset-syncs.msk.internal:x", "orders:msk.checkpoints.internal", "orders:orders-internal",
        "orders:mm2-connect-offsets"})
    void renamingToOrFromInternalTopicsIsRejectedAtConfigure(String renames) {
        ConfigException e = assertThrows(ConfigException.class,
            () -> policy("offset.storage.topic", "mm2-connect-offsets", RENAMES, renames));
        assertTrue(e.getMessage().contains(RENAMES), e.getMessage());
        assertTrue(e.getMessage().contains("internal topic"), e.getMessage());
    }

    @Test
    void failedConfigureKeepsThePreviousConfiguration() {
        IdentityMigrationReplicationPolicy p = policy(RENAMES, "a:b");
        assertThrows(ConfigException.class, () -> p.configure(Map.of(RENAMES, "a:b,c:b")));
        assertEquals(Map.of("a", "b"), p.topicRenames());
        assertEquals("b", p.formatRemoteTopic("onprem", "a"));
    }

    // ---- how MM2 itself uses the policy (logic copied from Kafka 3.9/4.1 connect-mirror) ------------

    /** MirrorSourceConnector.findTargetTopicPartitions + refreshTopicPartitions, topic level. */
    @Test
    void everyReplicatedTargetTopicMapsBackToItsSourceTopicLikeMirrorSourceConnectorExpects() {
        IdentityMigrationReplicationPolicy p = policy(RENAMES, "orders:orders-v2");
        Set<String> sourceTopics = Set.of("orders", "payments", "heartbeats");
        Set<String> targetTopics = sourceTopics.stream().map(t -> p.formatRemoteTopic("onprem", t))
            .collect(Collectors.toSet());
        targetTopics = new java.util.HashSet<>(targetTopics);
        targetTopics.addAll(Set.of("heartbeats", "__consumer_offsets", "onprem.checkpoints.internal",
            "mm2-offset-syncs.msk.internal"));

        Set<String> ownedOnTarget = targetTopics.stream()
            .filter(t -> "onprem".equals(p.topicSource(t)))
            .collect(Collectors.toSet());
        assertEquals(Set.of("orders-v2", "payments", "onprem.heartbeats"), ownedOnTarget);
        Set<String> upstream = ownedOnTarget.stream().map(p::upstreamTopic).collect(Collectors.toSet());
        assertEquals(sourceTopics, upstream, "no source topic may look missing on the target");
    }

    /** MirrorSourceConnector.isCycle. */
    private static boolean isCycle(ReplicationPolicy p, String target, String topic) {
        String source = p.topicSource(topic);
        if (source == null) {
            return false;
        } else if (source.equals(target)) {
            return true;
        } else {
            String upstream = p.upstreamTopic(topic);
            if (upstream == null || upstream.equals(topic)) {
                return false;
            }
            return isCycle(p, target, upstream);
        }
    }

    @Test
    void heartbeatsCyclesAreDetectedButOrdinaryTopicsCannotBe() {
        IdentityMigrationReplicationPolicy p = policy();
        assertTrue(isCycle(p, "msk", "msk.heartbeats"), "heartbeats that came from the target are a cycle");
        assertTrue(isCycle(p, "msk", "dc1.msk.heartbeats"));
        assertFalse(isCycle(p, "msk", "dc1.heartbeats"));
        assertFalse(isCycle(p, "msk", "heartbeats"));
        // identity naming: an ordinary topic never reveals that it came from the target (see README caveat)
        assertFalse(isCycle(p, "msk", "orders"));
    }

    /** MirrorCheckpointTask.renameTopicPartition, topic level. */
    @Test
    void checkpointsRenameSourceTopicsToTheirTargetNames() {
        IdentityMigrationReplicationPolicy p = policy(RENAMES, "orders:orders-v2");
        String targetAlias = "msk";
        for (Map.Entry<String, String> c : Map.of("orders", "orders-v2", "payments", "payments").entrySet()) {
            String upstreamTopic = c.getKey();
            String renamed = targetAlias.equals(p.topicSource(upstreamTopic))
                ? p.originalTopic(upstreamTopic)
                : p.formatRemoteTopic("onprem", upstreamTopic);
            assertEquals(c.getValue(), renamed, upstreamTopic);
        }
    }
}
