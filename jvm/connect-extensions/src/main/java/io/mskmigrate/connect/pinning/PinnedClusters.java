package io.mskmigrate.connect.pinning;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The environment's Kafka clusters as the worker pins them, and the check of a connector config against them.
 *
 * <p>Invariant: a connector config accepted here names (a) cluster settings only under {@link #PINNED_PREFIXES},
 * each prefix carrying one pinned cluster's {@code bootstrap.servers} and, for every other setting it gives, that
 * cluster's value (the text msk-migrate's renderer writes, {@code ${env:...}} references included) and, under a
 * framework override prefix ({@link #FRAMEWORK_OVERRIDE_PREFIXES}), every setting that cluster pins; and (b) no
 * config provider variable anywhere else.
 * Together these leave a connector no way to send a secret anywhere but to the cluster it belongs to: the secret
 * can be referenced only inside the one setting that carries it to its own cluster (a JAAS entry, a PEM key).
 *
 * <p>Worker settings (rendered by msk_migrate.connectors.worker_env):
 * {@value #CLUSTERS_CONFIG}{@code =source,target} and {@value #PREFIX}{@code <alias>.<client key>=<value>}, where
 * {@code $[env:} stands for {@code ${env:} (the worker resolves its own {@code ${...}} variables at start, and
 * the pinned text must stay the reference, not the secret).
 */
public final class PinnedClusters {
    public static final String PREFIX = "msk.migrate.connector.pinned.";
    public static final String CLUSTERS_CONFIG = PREFIX + "clusters";
    /** Written in worker.properties instead of {@code ${env:} so the worker keeps the reference unresolved. */
    public static final String ESCAPED_VARIABLE = "$[env:";

    /** Where a connector may carry cluster settings: MM2's two clusters and the framework clients' overrides
     *  (the reverse flow's producer writes to the source: msk_migrate.connectors.render.reverse_producer). */
    public static final List<String> PINNED_PREFIXES = List.of(
            "source.cluster.", "target.cluster.", "producer.override.", "consumer.override.", "admin.override.");
    /** The Connect framework's client overrides: a setting left out of one falls back to the worker's own
     *  {@code producer.*}/{@code consumer.*}/{@code admin.*} setting, i.e. the worker's cluster's credentials
     *  (Worker#baseProducerConfigs puts the overrides over the worker's settings). MM2's own prefixes fall back
     *  to Kafka's defaults instead (MirrorConnectorConfig builds its clients from the connector config alone). */
    public static final List<String> FRAMEWORK_OVERRIDE_PREFIXES = List.of(
            "producer.override.", "consumer.override.", "admin.override.");

    /** A client key that says where a client connects or with what identity (under any prefix). */
    static final Pattern CLUSTER_KEY = Pattern.compile(
            "(?:^|\\.)(bootstrap\\.servers|security\\.protocol|security\\.providers|sasl\\.[A-Za-z0-9._-]+|ssl\\.[A-Za-z0-9._-]+)$");
    /** Kafka's ConfigTransformer.DEFAULT_PATTERN: what a worker would resolve through a config provider. */
    static final Pattern VARIABLE = Pattern.compile("\\$\\{([^}]*?):(([^}]*?):)?([^}]*?)\\}");

    private final Map<String, Map<String, String>> clusters;

    public PinnedClusters(Map<String, Map<String, String>> clusters) {
        Map<String, Map<String, String>> copy = new LinkedHashMap<>();
        clusters.forEach((alias, settings) -> copy.put(alias, Map.copyOf(settings)));
        this.clusters = Map.copyOf(copy);
    }

    /** Reads the pinned clusters from the worker's configs (what a REST extension's configure() receives). */
    public static PinnedClusters fromWorkerConfig(Map<String, ?> workerConfigs) {
        Object listed = workerConfigs.get(CLUSTERS_CONFIG);
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        if (listed != null) {
            for (String alias : String.valueOf(listed).split(",")) {
                String a = alias.trim();
                if (a.isEmpty()) {
                    continue;
                }
                Map<String, String> settings = new TreeMap<>();
                String p = PREFIX + a + ".";
                workerConfigs.forEach((k, v) -> {
                    if (k.startsWith(p) && v != null) {
                        settings.put(k.substring(p.length()), String.valueOf(v).replace(ESCAPED_VARIABLE, "${env:"));
                    }
                });
                out.put(a, settings);
            }
        }
        return new PinnedClusters(out);
    }

    public Set<String> aliases() {
        return new TreeSet<>(clusters.keySet());
    }

    /**
     * The first reason ``config`` is refused, one line naming the key and the fix; null when it is accepted.
     * Never quotes a value: a refused value may hold a resolved secret's reference or a hostile text.
     */
    public String refusal(Map<String, String> config) {
        Map<String, Map<String, String>> groups = new TreeMap<>();
        for (Map.Entry<String, String> e : new TreeMap<>(config).entrySet()) {
            String key = e.getKey();
            String value = e.getValue();
            if (value == null) {
                continue;  // a PATCH removing a key
            }
            Matcher m = CLUSTER_KEY.matcher(key);
            if (m.find()) {
                String prefix = key.substring(0, m.start(1));
                if (!PINNED_PREFIXES.contains(prefix)) {
                    return "'" + key + "' is a cluster setting outside source.cluster.*/target.cluster.*: this worker "
                            + "pins where connectors connect; render the connector with msk-migrate (connectors apply)";
                }
                groups.computeIfAbsent(prefix, p -> new TreeMap<>()).put(m.group(1), value);
            } else if (VARIABLE.matcher(value).find()) {
                return "'" + key + "' names a config provider variable: only the cluster settings msk-migrate renders "
                        + "may reference secrets; put a literal value";
            }
        }
        for (Map.Entry<String, Map<String, String>> g : groups.entrySet()) {
            String error = groupRefusal(g.getKey(), g.getValue());
            if (error != null) {
                return error;
            }
        }
        return null;
    }

    private String groupRefusal(String prefix, Map<String, String> settings) {
        String bootstrap = settings.get("bootstrap.servers");
        if (bootstrap == null) {
            return "'" + prefix + "bootstrap.servers' is missing: cluster settings under " + prefix
                    + "* must name one of this environment's clusters " + aliases();
        }
        List<String> candidates = new ArrayList<>();
        clusters.forEach((alias, pinned) -> {
            if (bootstrap.equals(pinned.get("bootstrap.servers"))) {
                candidates.add(alias);
            }
        });
        if (candidates.isEmpty()) {
            return "'" + prefix + "bootstrap.servers' names no cluster of this environment " + aliases()
                    + " (" + CLUSTERS_CONFIG + "): a connector may only connect to the migration's own clusters";
        }
        String first = null;
        for (String alias : candidates) {
            String error = difference(prefix, alias, clusters.get(alias), settings);
            if (error == null) {
                return null;
            }
            first = first == null ? error : first;
        }
        return first;
    }

    /** A setting given must be the pinned text. One left out is allowed under MM2's own prefixes (Kafka's default
     *  then applies to a connection to the pinned address: it can only fail to connect, never carry a secret
     *  elsewhere) but not under a framework override prefix, where it would be the worker's own setting: a
     *  producer pointed at the source with the worker's (target's) JAAS entry would present it to the source. */
    private static String difference(String prefix, String alias, Map<String, String> pinned, Map<String, String> given) {
        for (String k : new TreeSet<>(given.keySet())) {
            String want = pinned.get(k);
            String got = given.get(k);
            if (want == null) {
                return "'" + prefix + k + "' is not a setting of the " + alias + " cluster as this worker pins it: remove it";
            }
            if (got != null && !want.equals(got)) {
                return "'" + prefix + k + "' differs from the " + alias + " cluster's pinned setting: use the rendered value";
            }
        }
        if (FRAMEWORK_OVERRIDE_PREFIXES.contains(prefix)) {
            for (String k : new TreeSet<>(pinned.keySet())) {
                if (!given.containsKey(k)) {
                    return "'" + prefix + k + "' is missing: an override that names the " + alias + " cluster must carry "
                            + "all its pinned settings " + new TreeSet<>(pinned.keySet()) + " (left out, the worker's own "
                            + "client setting would apply toward it); render the connector with msk-migrate";
                }
            }
        }
        return null;
    }

    /** The pinned settings of the cluster whose {@code bootstrap.servers} lists exactly ``addresses`` (any order,
     *  any spacing), or null. */
    public Map<String, String> clusterAt(Set<String> addresses) {
        for (Map<String, String> settings : clusters.values()) {
            String bootstrap = settings.get("bootstrap.servers");
            if (bootstrap != null && addressSet(bootstrap).equals(addresses)) {
                return settings;
            }
        }
        return null;
    }

    static Set<String> addressSet(String bootstrap) {
        Set<String> out = new TreeSet<>();
        for (String a : bootstrap.split(",")) {
            if (!a.trim().isEmpty()) {
                out.add(a.trim());
            }
        }
        return out;
    }
}
