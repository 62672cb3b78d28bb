package io.mskmigrate.connect.pinning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PinnedClustersTest {
    static final String JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required "
            + "username=\"${env:MM2_SOURCE_SASL_USERNAME}\" password=\"${env:MM2_SOURCE_SASL_PASSWORD}\";";

    /** As worker.properties carries them (after the worker resolved nothing: $[env: is not a variable). */
    static Map<String, Object> workerConfig() {
        Map<String, Object> w = new HashMap<>();
        w.put(PinnedClusters.CLUSTERS_CONFIG, "source,target");
        w.put(PinnedClusters.PREFIX + "source.bootstrap.servers", "src:9094");
        w.put(PinnedClusters.PREFIX + "source.security.protocol", "SASL_PLAINTEXT");
        w.put(PinnedClusters.PREFIX + "source.sasl.mechanism", "SCRAM-SHA-512");
        w.put(PinnedClusters.PREFIX + "source.sasl.jaas.config", JAAS.replace("${env:", PinnedClusters.ESCAPED_VARIABLE));
        w.put(PinnedClusters.PREFIX + "target.bootstrap.servers", "tgt:9092");
        w.put(PinnedClusters.PREFIX + "target.security.protocol", "PLAINTEXT");
        w.put("bootstrap.servers", "tgt:9092");
        return w;
    }

    static Map<String, String> rendered() {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("connector.class", "org.apache.kafka.connect.mirror.MirrorSourceConnector");
        c.put("source.cluster.alias", "source");
        c.put("source.cluster.bootstrap.servers", "src:9094");
        c.put("source.cluster.security.protocol", "SASL_PLAINTEXT");
        c.put("source.cluster.sasl.mechanism", "SCRAM-SHA-512");
        c.put("source.cluster.sasl.jaas.config", JAAS);
        c.put("target.cluster.bootstrap.servers", "tgt:9092");
        c.put("target.cluster.security.protocol", "PLAINTEXT");
        c.put("producer.override.batch.size", "65536");
        c.put("source.consumer.fetch.max.bytes", "1048576");
        return c;
    }

    final PinnedClusters pinned = PinnedClusters.fromWorkerConfig(workerConfig());

    @Test
    void theRenderedConfigAndTheReverseFlowAreAccepted() {
        assertNull(pinned.refusal(rendered()));
        // reverse flow: the clusters swap sides, the producer writes to the source with its credentials
        Map<String, String> reverse = new LinkedHashMap<>();
        reverse.put("source.cluster.bootstrap.servers", "tgt:9092");
        reverse.put("source.cluster.security.protocol", "PLAINTEXT");
        reverse.put("target.cluster.bootstrap.servers", "src:9094");
        reverse.put("target.cluster.security.protocol", "SASL_PLAINTEXT");
        reverse.put("target.cluster.sasl.mechanism", "SCRAM-SHA-512");
        reverse.put("target.cluster.sasl.jaas.config", JAAS);
        reverse.put("producer.override.bootstrap.servers", "src:9094");
        reverse.put("producer.override.security.protocol", "SASL_PLAINTEXT");
        reverse.put("producer.override.sasl.mechanism", "SCRAM-SHA-512");
        reverse.put("producer.override.sasl.jaas.config", JAAS);
        assertNull(pinned.refusal(reverse));
    }

    @Test
    void theSecretInAHostNameIsRefusedNamingTheKey() {
        Map<String, String> c = rendered();
        c.put("source.cluster.bootstrap.servers", "${env:MM2_SOURCE_SASL_PASSWORD}.invalid:9092");
        String error = pinned.refusal(c);
        assertTrue(error.startsWith("'source.cluster.bootstrap.servers' names no cluster of this environment"), error);
        assertFalse(error.contains("MM2_SOURCE_SASL_PASSWORD"), "a refusal never quotes the value");
    }

    @Test
    void theJaasRouteToAnotherHostIsRefused() {
        Map<String, String> c = rendered();
        c.put("source.cluster.bootstrap.servers", "evil.example:443");
        c.put("source.cluster.sasl.mechanism", "PLAIN");
        c.put("source.cluster.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"x\" password=\"${env:MM2_SOURCE_SASL_PASSWORD}\";");
        assertTrue(pinned.refusal(c).startsWith("'source.cluster.bootstrap.servers' names no cluster"));
        // ...and on the pinned host, the mechanism and JAAS must still be the pinned ones
        c.put("source.cluster.bootstrap.servers", "src:9094");
        assertTrue(pinned.refusal(c).startsWith("'source.cluster.sasl.jaas.config' differs from the source cluster's"),
                pinned.refusal(c));
        c.put("source.cluster.sasl.jaas.config", JAAS);
        assertTrue(pinned.refusal(c).startsWith("'source.cluster.sasl.mechanism' differs"), pinned.refusal(c));
    }

    @Test
    void aVariableOutsideThePinnedSettingsIsRefused() {
        for (String key : new String[] {"tasks.max", "source.cluster.alias", "topics", "producer.override.linger.ms"}) {
            Map<String, String> c = rendered();
            c.put(key, "${env:MM2_SOURCE_SASL_PASSWORD}");
            assertEquals("'" + key + "' names a config provider variable: only the cluster settings msk-migrate renders "
                    + "may reference secrets; put a literal value", pinned.refusal(c));
        }
        Map<String, String> c = rendered();
        c.put("topics", "${file:/etc/passwd:x}");
        assertTrue(pinned.refusal(c).startsWith("'topics' names a config provider variable"));
    }

    @Test
    void clusterSettingsUnderAnyOtherPrefixAreRefused() {
        for (String key : new String[] {"source.consumer.bootstrap.servers", "consumer.sasl.jaas.config",
                "source.admin.security.protocol", "target.producer.ssl.truststore.location", "bootstrap.servers",
                "sasl.jaas.config"}) {
            Map<String, String> c = rendered();
            c.put(key, "x");
            String error = pinned.refusal(c);
            assertNotNull(error, key);
            assertTrue(error.startsWith("'" + key + "' is a cluster setting outside source.cluster.*/target.cluster.*"), error);
        }
    }

    @Test
    void anExtraSettingOrAMissingBootstrapIsRefusedAMissingDefaultIsNot() {
        Map<String, String> c = rendered();
        c.put("source.cluster.ssl.truststore.location", "/etc/hostname");
        assertTrue(pinned.refusal(c).startsWith("'source.cluster.ssl.truststore.location' is not a setting of the source cluster"));
        c = rendered();
        c.remove("source.cluster.sasl.mechanism");  // Kafka's default toward the pinned address: fails, leaks nothing
        assertNull(pinned.refusal(c));
        c = rendered();
        c.remove("target.cluster.bootstrap.servers");
        assertTrue(pinned.refusal(c).startsWith("'target.cluster.bootstrap.servers' is missing"));
    }

    @Test
    void aWorkerThatPinsNothingRefusesEveryClusterSetting() {
        PinnedClusters none = PinnedClusters.fromWorkerConfig(Map.of());
        assertTrue(none.refusal(rendered()).contains("names no cluster of this environment []"));
        assertNull(none.refusal(Map.of("connector.class", "x", "tasks.max", "1")));
    }

    @Test
    void aFrameworkOverrideNamingAPinnedClusterMustCarryItsWholeSecurity() {
        // Left out, the worker's own producer.* setting (the target's credentials) would apply toward the source.
        for (String left : new String[] {"security.protocol", "sasl.mechanism", "sasl.jaas.config"}) {
            for (String prefix : PinnedClusters.FRAMEWORK_OVERRIDE_PREFIXES) {
                Map<String, String> c = rendered();
                c.put(prefix + "bootstrap.servers", "src:9094");
                c.put(prefix + "security.protocol", "SASL_PLAINTEXT");
                c.put(prefix + "sasl.mechanism", "SCRAM-SHA-512");
                c.put(prefix + "sasl.jaas.config", JAAS);
                assertNull(pinned.refusal(c), prefix);
                c.remove(prefix + left);
                String error = pinned.refusal(c);
                assertNotNull(error, prefix + left);
                assertTrue(error.startsWith("'" + prefix + left + "' is missing: an override that names the source cluster "
                        + "must carry all its pinned settings [bootstrap.servers, sasl.jaas.config, sasl.mechanism, "
                        + "security.protocol]"), error);
            }
        }
        // The bootstrap alone is the case of the issue: the producer would log in to the source as the worker.
        Map<String, String> c = rendered();
        c.put("producer.override.bootstrap.servers", "src:9094");
        assertTrue(pinned.refusal(c).startsWith("'producer.override.sasl.jaas.config' is missing"), pinned.refusal(c));
        // Toward the worker's own cluster the same rule holds (one rule, whatever the cluster).
        c = rendered();
        c.put("admin.override.bootstrap.servers", "tgt:9092");
        assertTrue(pinned.refusal(c).startsWith("'admin.override.security.protocol' is missing: an override that names the target"),
                pinned.refusal(c));
        c.put("admin.override.security.protocol", "PLAINTEXT");
        assertNull(pinned.refusal(c));
        // A JSON null is not a value: the setting is left out.
        c.put("admin.override.security.protocol", null);
        assertNotNull(pinned.refusal(c));
    }

    @Test
    void clustersAreFoundByTheirAddressesInAnyOrder() {
        PinnedClusters two = PinnedClusters.fromWorkerConfig(Map.of(PinnedClusters.CLUSTERS_CONFIG, "source",
                PinnedClusters.PREFIX + "source.bootstrap.servers", "a:1, b:2", PinnedClusters.PREFIX + "source.security.protocol", "SSL"));
        assertEquals("SSL", two.clusterAt(PinnedClusters.addressSet("b:2,a:1")).get("security.protocol"));
        assertNull(two.clusterAt(PinnedClusters.addressSet("a:1")));
    }

    @Test
    void theAuditNamesTheUserNotThePassword() {
        String header = "Basic " + Base64.getEncoder().encodeToString("alice:s3cret".getBytes(StandardCharsets.UTF_8));
        assertEquals("alice", PinnedConnectorConfigExtension.user(null, header));
        assertEquals("bob", PinnedConnectorConfigExtension.user(() -> "bob", header));
        assertEquals("-", PinnedConnectorConfigExtension.user(null, null));
        assertEquals("{\"error_code\":400,\"message\":\"'a' \\\"b\\\"\"}", PinnedConnectorConfigExtension.errorBody(400, "'a' \"b\""));
    }
}
