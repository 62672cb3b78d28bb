package io.mskmigrate.connect.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.stream.Collectors;
import io.mskmigrate.connect.pinning.PinnedClusters;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.connector.policy.ConnectorClientConfigOverridePolicy;
import org.apache.kafka.connect.connector.policy.ConnectorClientConfigRequest;
import org.apache.kafka.connect.connector.policy.ConnectorClientConfigRequest.ClientType;
import org.apache.kafka.connect.health.ConnectorType;
import org.apache.kafka.connect.mirror.MirrorCheckpointConnector;
import org.apache.kafka.connect.mirror.MirrorHeartbeatConnector;
import org.apache.kafka.connect.mirror.MirrorSourceConnector;
import org.junit.jupiter.api.Test;

class MirrorMakerOverridePolicyTest {

    static final String SOURCE = "src-1:9092,src-2:9092";
    static final String SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p;w\";";

    static MirrorMakerOverridePolicy policy(String pinned) {
        MirrorMakerOverridePolicy p = new MirrorMakerOverridePolicy();
        Map<String, Object> worker = new LinkedHashMap<>();
        worker.put("bootstrap.servers", "target:9092");
        if (pinned != null) {
            // As worker_env renders them together: the allowed address and that cluster's pinned settings.
            worker.put(MirrorMakerOverridePolicy.ALLOWED_BOOTSTRAP_CONFIG, pinned);
            worker.put(PinnedClusters.CLUSTERS_CONFIG, "source");
            worker.put(PinnedClusters.PREFIX + "source.bootstrap.servers", pinned);
            worker.put(PinnedClusters.PREFIX + "source.security.protocol", "SASL_SSL");
            worker.put(PinnedClusters.PREFIX + "source.sasl.mechanism", "SCRAM-SHA-512");
            worker.put(PinnedClusters.PREFIX + "source.sasl.jaas.config", "$[env:X}");
        }
        p.configure(worker);
        return p;
    }

    /** key -> error messages (empty = allowed). */
    static Map<String, List<String>> errors(MirrorMakerOverridePolicy p, Class<? extends Connector> cls, ClientType type,
                                            Map<String, Object> props) {
        List<ConfigValue> values = p.validate(new ConnectorClientConfigRequest("c", ConnectorType.SOURCE, cls, props, type));
        assertEquals(props.keySet(), values.stream().map(ConfigValue::name).collect(Collectors.toSet()));
        return values.stream().collect(Collectors.toMap(ConfigValue::name, ConfigValue::errorMessages));
    }

    static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    /** ``bootstrap`` with the whole security of the pinned source (what render.reverse_producer writes). */
    static Map<String, Object> toSource(Object bootstrap, Object... more) {
        Map<String, Object> m = map("bootstrap.servers", bootstrap, "security.protocol", "SASL_SSL",
                "sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config", new Password(SCRAM));
        m.putAll(map(more));
        return m;
    }

    @Test
    void aPinnedBootstrapWithoutThatClustersWholeSecurityIsRefused() {
        MirrorMakerOverridePolicy p = policy(SOURCE);
        for (ClientType type : ClientType.values()) {
            assertEquals(List.of(), errors(p, MirrorSourceConnector.class, type, toSource(SOURCE)).get("bootstrap.servers"));
            for (String left : List.of("security.protocol", "sasl.mechanism", "sasl.jaas.config")) {
                Map<String, Object> props = toSource(SOURCE);
                props.remove(left);
                List<String> e = errors(p, MirrorSourceConnector.class, type, props).get("bootstrap.servers");
                String client = type.name().toLowerCase();
                assertEquals(List.of("'bootstrap.servers' names a pinned cluster but leaves out " + client + ".override." + left
                        + ": the worker's own " + client + " setting (its cluster's credentials) would apply toward it; "
                        + "carry every pinned setting of that cluster"), e, type + " " + left);
            }
        }
        // The case: the bootstrap alone.
        List<String> alone = errors(p, MirrorSourceConnector.class, ClientType.PRODUCER, map("bootstrap.servers", SOURCE))
                .get("bootstrap.servers");
        assertEquals(1, alone.size());
        assertTrue(alone.get(0).contains("leaves out producer.override.sasl.jaas.config, producer.override.sasl.mechanism, "
                + "producer.override.security.protocol"), alone.get(0));
    }

    @Test
    void anAllowedAddressWhoseClusterIsNotPinnedFailsClosed() {
        MirrorMakerOverridePolicy p = new MirrorMakerOverridePolicy();
        p.configure(Map.of(MirrorMakerOverridePolicy.ALLOWED_BOOTSTRAP_CONFIG, SOURCE));
        List<String> e = errors(p, MirrorSourceConnector.class, ClientType.PRODUCER, toSource(SOURCE)).get("bootstrap.servers");
        assertEquals(1, e.size());
        assertTrue(e.get(0).startsWith("'bootstrap.servers' names no cluster whose settings this worker pins"), e.get(0));
    }

    @Test
    void producerTuningOfEveryMirrorMakerConnectorIsAllowed() {
        MirrorMakerOverridePolicy p = policy(SOURCE);
        for (Class<? extends Connector> cls : List.of(MirrorSourceConnector.class, MirrorCheckpointConnector.class,
                MirrorHeartbeatConnector.class)) {
            Map<String, List<String>> e = errors(p, cls, ClientType.PRODUCER,
                    map("batch.size", 262144, "linger.ms", "20", "compression.type", "lz4", "max.request.size", "4194304"));
            e.values().forEach(msgs -> assertEquals(List.of(), msgs, cls.getName()));
        }
    }

    /** Same code as MM2's source connector, another class: the policy matches class names exactly. */
    public static class LookalikeConnector extends MirrorSourceConnector {
    }

    @Test
    void anotherConnectorClassMayOverrideNothing() {
        Map<String, List<String>> e = errors(policy(SOURCE), LookalikeConnector.class, ClientType.PRODUCER,
                map("linger.ms", "20", "bootstrap.servers", SOURCE));
        assertEquals(1, e.get("linger.ms").size());
        assertTrue(e.get("linger.ms").get(0).contains("only MirrorMaker 2 connectors"), e.toString());
        assertEquals(1, e.get("bootstrap.servers").size());
    }

    @Test
    void keysOutsideTheAllowlistAreRefusedWithTheAllowedOnesNamed() {
        Map<String, List<String>> e = errors(policy(SOURCE), MirrorSourceConnector.class, ClientType.PRODUCER,
                map("acks", "1", "interceptor.classes", "x.Evil", "key.serializer", "x.S", "batch.size", "1000"));
        for (String k : List.of("acks", "interceptor.classes", "key.serializer")) {
            assertEquals(1, e.get(k).size(), k);
            assertTrue(e.get(k).get(0).contains("'" + k + "' is not an allowed producer override"), e.get(k).get(0));
            assertTrue(e.get(k).get(0).contains("linger.ms"), e.get(k).get(0));
        }
        assertEquals(List.of(), e.get("batch.size"));
    }

    @Test
    void tuningKeysAreProducerOnly() {
        Map<String, List<String>> e = errors(policy(SOURCE), MirrorSourceConnector.class, ClientType.CONSUMER,
                map("linger.ms", "20", "fetch.min.bytes", "1"));
        assertEquals(1, e.get("linger.ms").size());
        assertEquals(1, e.get("fetch.min.bytes").size());
    }

    @Test
    void bootstrapServersMayNameOnlyThePinnedCluster() {
        MirrorMakerOverridePolicy p = policy(" src-1:9092 , src-2:9092 ");
        assertEquals(List.of("src-1:9092", "src-2:9092"), List.copyOf(p.allowedBootstrapServers()));
        // parsed (REST validation hands a List) and raw (task start hands the String) both work
        assertEquals(List.of(), errors(p, MirrorSourceConnector.class, ClientType.PRODUCER,
                toSource(List.of("src-2:9092", "src-1:9092"))).get("bootstrap.servers"));
        assertEquals(1, errors(p, MirrorCheckpointConnector.class, ClientType.ADMIN,
                toSource("src-1:9092")).get("bootstrap.servers").size(), "a part of the cluster's addresses is not the cluster");
        List<String> evil = errors(p, MirrorSourceConnector.class, ClientType.PRODUCER,
                map("bootstrap.servers", "src-1:9092,evil:9092")).get("bootstrap.servers");
        assertEquals(1, evil.size());
        assertTrue(evil.get(0).contains("not evil:9092") && evil.get(0).contains("src-1:9092,src-2:9092"), evil.get(0));
        assertEquals(1, errors(p, MirrorSourceConnector.class, ClientType.PRODUCER,
                map("bootstrap.servers", "")).get("bootstrap.servers").size());
    }

    @Test
    void withoutAPinnedClusterBootstrapServersIsRefused() {
        List<String> e = errors(policy(null), MirrorSourceConnector.class, ClientType.PRODUCER,
                map("bootstrap.servers", SOURCE)).get("bootstrap.servers");
        assertEquals(1, e.size());
        assertTrue(e.get(0).contains(MirrorMakerOverridePolicy.ALLOWED_BOOTSTRAP_CONFIG + " is unset"), e.get(0));
    }

    @Test
    void securitySettingsGoOnlyWithThePinnedBootstrapServers() {
        MirrorMakerOverridePolicy p = policy(SOURCE);
        Map<String, Object> security = map("security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-512",
                "sasl.jaas.config", new Password(SCRAM), "ssl.truststore.type", "PEM", "ssl.truststore.certificates", "x");
        Map<String, Object> alone = errors(p, MirrorSourceConnector.class, ClientType.PRODUCER, security)
                .entrySet().stream().filter(x -> x.getValue().size() == 1).collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        assertEquals(security.keySet(), alone.keySet());
        for (ClientType type : ClientType.values()) {
            Map<String, Object> withBootstrap = new LinkedHashMap<>(security);
            withBootstrap.put("bootstrap.servers", SOURCE);
            errors(p, MirrorCheckpointConnector.class, type, withBootstrap)
                    .forEach((k, msgs) -> assertEquals(List.of(), msgs, type + " " + k));
        }
    }

    @Test
    void theIamCallbackHandlerIsTheOnlyClassAConnectorMayName() {
        MirrorMakerOverridePolicy p = policy(SOURCE);
        Map<String, List<String>> ok = errors(p, MirrorSourceConnector.class, ClientType.PRODUCER, map(
                "bootstrap.servers", SOURCE, "security.protocol", "SASL_SSL", "sasl.mechanism", "AWS_MSK_IAM",
                "sasl.jaas.config", "software.amazon.msk.auth.iam.IAMLoginModule required;",
                "sasl.client.callback.handler.class", "software.amazon.msk.auth.iam.IAMClientCallbackHandler"));
        ok.forEach((k, msgs) -> assertEquals(List.of(), msgs, k));
        Map<String, List<String>> bad = errors(p, MirrorSourceConnector.class, ClientType.PRODUCER, map(
                "bootstrap.servers", SOURCE,
                "sasl.client.callback.handler.class", "x.Evil",
                "ssl.engine.factory.class", "x.Evil",
                "sasl.login.class", "x.Evil",
                "ssl.endpoint.identification.algorithm", ""));
        for (String k : List.of("sasl.client.callback.handler.class", "ssl.engine.factory.class", "sasl.login.class",
                "ssl.endpoint.identification.algorithm")) {
            assertEquals(1, bad.get(k).size(), k);
        }
    }

    @Test
    void jaasConfigMustBeOneEntryOfAnAllowedLoginModuleAndIsNeverEchoed() {
        MirrorMakerOverridePolicy p = policy(SOURCE);
        String jndi = "com.sun.security.auth.module.JndiLoginModule required user.provider.url=\"ldap://evil\" secret=\"s3cr3t\";";
        String two = SCRAM + " " + jndi;
        for (String jaas : List.of(jndi, two, "not a jaas config")) {
            List<String> e = errors(p, MirrorSourceConnector.class, ClientType.PRODUCER,
                    map("bootstrap.servers", SOURCE, "sasl.jaas.config", new Password(jaas))).get("sasl.jaas.config");
            assertEquals(1, e.size(), jaas);
            assertTrue(e.get(0).contains("ScramLoginModule") && !e.get(0).contains("s3cr3t"), e.get(0));
        }
    }

    @Test
    void theWorkerFindsThePolicyThroughTheServiceLoaderManifest() {
        boolean found = ServiceLoader.load(ConnectorClientConfigOverridePolicy.class).stream()
                .anyMatch(s -> s.type() == MirrorMakerOverridePolicy.class);
        assertTrue(found);
    }
}
