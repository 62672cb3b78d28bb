package io.mskmigrate.connect.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import javax.security.auth.login.AppConfigurationEntry;
import io.mskmigrate.connect.pinning.PinnedClusters;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.connect.connector.policy.ConnectorClientConfigOverridePolicy;
import org.apache.kafka.connect.connector.policy.ConnectorClientConfigRequest;
import org.apache.kafka.connect.connector.policy.ConnectorClientConfigRequest.ClientType;

/**
 * Connector client overrides ({@code producer|consumer|admin.override.*}) for MirrorMaker 2 only.
 *
 * <p>Connect's {@code All} lets anyone who may create connectors point a connector's clients anywhere;
 * {@code None} also refuses what MM2 needs: the producer that writes the replicated records is the
 * framework's, so its tuning ({@code producer.override.batch.size}, ...) and, for the reverse flow of a
 * rollback, its cluster ({@code producer.override.bootstrap.servers} plus the source's security settings)
 * are client overrides. This policy allows exactly that:
 * <ul>
 *   <li>only for {@link #MM2_CONNECTORS} (any other connector class: every override refused);</li>
 *   <li>producer: {@link #PRODUCER_TUNING} keys;</li>
 *   <li>producer, consumer, admin: {@link #CONNECTION} keys, only together with a {@code bootstrap.servers}
 *       whose every address is one the operator pinned in the worker config
 *       ({@value #ALLOWED_BOOTSTRAP_CONFIG}, rendered by msk_migrate.connectors.worker_env). Consumer and
 *       admin need them when exactly-once support puts a reverse connector's offsets on the cluster its
 *       producer writes to (Worker#offsetStoreForExactlyOnceSourceTask);</li>
 *   <li>such a {@code bootstrap.servers} only together with every setting the worker pins for that cluster
 *       ({@link PinnedClusters}, {@code msk.migrate.connector.pinned.<alias>.*}): a setting left out falls back
 *       to the worker's own client setting, i.e. the worker's cluster's credentials would be presented to the
 *       named cluster. The values are compared by the pinned-config REST filter, before any variable is
 *       resolved; this policy sees resolved values and so checks that the keys are all there;</li>
 *   <li>{@code sasl.jaas.config} only with {@link #LOGIN_MODULES}, {@code *.class} keys only with
 *       {@link #CLASS_VALUES}: no connector-chosen code in the worker.</li>
 * </ul>
 * Everything else gets an error on its {@link ConfigValue} (REST validation and task start both refuse it).
 */
public class MirrorMakerOverridePolicy implements ConnectorClientConfigOverridePolicy {

    /** Worker config: comma-separated host:port list the overridden {@code bootstrap.servers} may name. */
    public static final String ALLOWED_BOOTSTRAP_CONFIG = "msk.migrate.client.override.allowed.bootstrap.servers";

    public static final Set<String> MM2_CONNECTORS = Set.of(
            "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
            "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector");

    /** Throughput/latency settings of the framework producer; nothing that changes what is written
     *  (serializers, partitioner, idempotence, acks, ids) or loads code (interceptors, reporters). */
    public static final Set<String> PRODUCER_TUNING = Set.of(
            "batch.size", "linger.ms", "compression.type", "compression.gzip.level", "compression.lz4.level",
            "compression.zstd.level", "max.request.size", "buffer.memory", "max.block.ms", "request.timeout.ms",
            "delivery.timeout.ms", "retries", "retry.backoff.ms", "retry.backoff.max.ms",
            "max.in.flight.requests.per.connection", "send.buffer.bytes", "receive.buffer.bytes",
            "connections.max.idle.ms", "metadata.max.age.ms", "metadata.max.idle.ms", "reconnect.backoff.ms",
            "reconnect.backoff.max.ms", "socket.connection.setup.timeout.ms",
            "socket.connection.setup.timeout.max.ms", "transaction.timeout.ms");

    public static final String BOOTSTRAP = "bootstrap.servers";

    /** Security settings of a client pointed at a pinned cluster (the reverse flow's source). */
    public static final Set<String> CONNECTION = Set.of(
            "security.protocol", "sasl.mechanism", "sasl.jaas.config", "sasl.client.callback.handler.class");
    /** {@code ssl.*} is a connection key too, except these (custom engine code, hostname verification off). */
    public static final Set<String> SSL_EXCLUDED = Set.of("ssl.engine.factory.class",
            "ssl.endpoint.identification.algorithm");

    public static final Set<String> LOGIN_MODULES = Set.of(
            "org.apache.kafka.common.security.scram.ScramLoginModule",
            "org.apache.kafka.common.security.plain.PlainLoginModule",
            "software.amazon.msk.auth.iam.IAMLoginModule");

    public static final Map<String, Set<String>> CLASS_VALUES = Map.of(
            "sasl.client.callback.handler.class", Set.of("software.amazon.msk.auth.iam.IAMClientCallbackHandler"));

    private Set<String> allowedBootstrap = Set.of();
    private PinnedClusters pinnedClusters = new PinnedClusters(Map.of());

    @Override
    public void configure(Map<String, ?> workerConfigs) {
        Object raw = workerConfigs.get(ALLOWED_BOOTSTRAP_CONFIG);
        allowedBootstrap = raw == null ? Set.of() : addresses(raw);
        pinnedClusters = PinnedClusters.fromWorkerConfig(workerConfigs);
    }

    /** The pinned addresses (for tests and the log). */
    public Set<String> allowedBootstrapServers() {
        return allowedBootstrap;
    }

    @Override
    public List<ConfigValue> validate(ConnectorClientConfigRequest request) {
        Map<String, Object> props = request.clientProps();
        String connectorClass = request.connectorClass() == null ? "" : request.connectorClass().getName();
        boolean mm2 = MM2_CONNECTORS.contains(connectorClass);
        String bootstrapError = props.containsKey(BOOTSTRAP) ? bootstrapError(props.get(BOOTSTRAP)) : null;
        boolean pinned = props.containsKey(BOOTSTRAP) && bootstrapError == null;
        if (pinned) {
            bootstrapError = incompleteSecurity(request.clientType(), props);
        }
        List<ConfigValue> out = new ArrayList<>();
        for (Map.Entry<String, Object> e : props.entrySet()) {
            ConfigValue cv = new ConfigValue(e.getKey(), e.getValue(), new ArrayList<>(), new ArrayList<>());
            String error = !mm2
                    ? "only MirrorMaker 2 connectors may override client settings (connector.client.config.override.policy="
                      + getClass().getName() + "); " + connectorClass + " may not"
                    : error(request.clientType(), e.getKey(), e.getValue(), pinned, bootstrapError);
            if (error != null) {
                cv.addErrorMessage(error);
            }
            out.add(cv);
        }
        return out;
    }

    private String error(ClientType type, String key, Object value, boolean pinned, String bootstrapError) {
        String client = type.name().toLowerCase();
        if (key.equals(BOOTSTRAP)) {
            return bootstrapError;
        }
        if (isConnection(key)) {
            if (!pinned) {
                return "'" + key + "' may be overridden only together with " + client + ".override." + BOOTSTRAP
                        + " naming the pinned cluster (" + ALLOWED_BOOTSTRAP_CONFIG + ")";
            }
            return valueError(key, value);
        }
        if (type == ClientType.PRODUCER && PRODUCER_TUNING.contains(key)) {
            return null;
        }
        return "'" + key + "' is not an allowed " + client + " override for MirrorMaker 2 (allowed: "
                + (type == ClientType.PRODUCER ? "producer tuning keys " + new java.util.TreeSet<>(PRODUCER_TUNING)
                + ", and " : "")
                + BOOTSTRAP + " with security.protocol/sasl.mechanism/sasl.jaas.config/ssl.* toward the pinned cluster)";
    }

    static boolean isConnection(String key) {
        return CONNECTION.contains(key) || (key.startsWith("ssl.") && !SSL_EXCLUDED.contains(key));
    }

    private String bootstrapError(Object value) {
        Set<String> wanted = addresses(value);
        if (allowedBootstrap.isEmpty()) {
            return "'" + BOOTSTRAP + "' may not be overridden: the worker pins no cluster (" + ALLOWED_BOOTSTRAP_CONFIG
                    + " is unset)";
        }
        Set<String> foreign = wanted.stream().filter(a -> !allowedBootstrap.contains(a))
                .collect(Collectors.toCollection(LinkedHashSet::new));
        if (wanted.isEmpty() || !foreign.isEmpty()) {
            return "'" + BOOTSTRAP + "' may only name the pinned cluster " + String.join(",", allowedBootstrap)
                    + " (" + ALLOWED_BOOTSTRAP_CONFIG + "); not " + (wanted.isEmpty() ? "an empty list" : String.join(",", foreign));
        }
        return null;
    }

    /** The settings the worker pins for the cluster ``props`` names that ``props`` leaves out (one line), or null. */
    private String incompleteSecurity(ClientType type, Map<String, Object> props) {
        Map<String, String> cluster = pinnedClusters.clusterAt(new TreeSet<>(addresses(props.get(BOOTSTRAP))));
        String client = type.name().toLowerCase();
        if (cluster == null) {
            return "'" + BOOTSTRAP + "' names no cluster whose settings this worker pins (" + PinnedClusters.CLUSTERS_CONFIG
                    + "): the " + client + " would take the worker's own credentials toward it";
        }
        Set<String> missing = new TreeSet<>(cluster.keySet());
        missing.remove(BOOTSTRAP);
        missing.removeAll(props.keySet());
        if (missing.isEmpty()) {
            return null;
        }
        return "'" + BOOTSTRAP + "' names a pinned cluster but leaves out "
                + missing.stream().map(k -> client + ".override." + k).collect(Collectors.joining(", "))
                + ": the worker's own " + client + " setting (its cluster's credentials) would apply toward it; "
                + "carry every pinned setting of that cluster";
    }

    private static String valueError(String key, Object value) {
        String text = text(value).trim();
        if (key.equals("sasl.jaas.config")) {
            // Kafka's own parsing (the client's): it refuses anything but exactly one login module entry
            List<AppConfigurationEntry> entries;
            try {
                entries = JaasContext.loadClientContext(Map.of("sasl.jaas.config", new Password(text)))
                        .configurationEntries();
            } catch (RuntimeException e) {
                entries = List.of();
            }
            if (entries.size() != 1 || !LOGIN_MODULES.contains(entries.get(0).getLoginModuleName())) {
                return "'sasl.jaas.config' must be one entry of " + new java.util.TreeSet<>(LOGIN_MODULES);
            }
        }
        if (key.endsWith(".class") && !CLASS_VALUES.getOrDefault(key, Set.of()).contains(text)) {
            return "'" + key + "' may only be " + CLASS_VALUES.getOrDefault(key, Set.of("(nothing)"));
        }
        return null;
    }

    /** Values come parsed (REST validation: List, Password) or raw (task start: String). */
    static String text(Object value) {
        if (value instanceof Password) {
            return ((Password) value).value();
        }
        if (value instanceof Collection) {
            return ((Collection<?>) value).stream().map(String::valueOf).collect(Collectors.joining(","));
        }
        return value == null ? "" : value.toString();
    }

    static Set<String> addresses(Object value) {
        return Arrays.stream(text(value).split(",")).map(String::trim).filter(s -> !s.isEmpty())
                .collect(Collectors.toCollection(LinkedHashSet::new));
    }

    @Override
    public void close() {
    }
}
