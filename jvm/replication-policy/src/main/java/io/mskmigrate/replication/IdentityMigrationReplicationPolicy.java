package io.mskmigrate.replication;

import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.mirror.ReplicationPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * MirrorMaker 2 {@link ReplicationPolicy} for one-way migrations to Amazon MSK: replicated topics keep
 * their names on the target cluster (optionally renamed by explicit rules), while MM2's own bookkeeping
 * topics keep Kafka's default names so heartbeats, checkpoints and offset translation work unchanged.
 *
 * <h2>Naming</h2>
 * <ul>
 *   <li><b>Ordinary topics</b>: {@code formatRemoteTopic(alias, "orders") == "orders"}, or the new name of a
 *       rename rule. {@link #upstreamTopic} returns the topic itself (or, for a rename target, the original
 *       name). {@link #topicSource} cannot be derived from an unprefixed name: it is the configured
 *       {@code source.cluster.alias} (which every MM2 connector config carries, exactly as Kafka's
 *       {@code IdentityReplicationPolicy} does) or {@code null} when that key is absent (e.g. a plain
 *       {@code MirrorClient}). Internal topics and the source-side names of rename rules have no source.</li>
 *   <li><b>Heartbeats</b> are the exception and keep {@code DefaultReplicationPolicy} semantics: the local
 *       topic {@code heartbeats} is replicated as {@code <sourceAlias><separator>heartbeats}, so
 *       {@code topicSource("src.heartbeats") == "src"}, {@code upstreamTopic("src.heartbeats") == "heartbeats"}
 *       and multi-hop names ({@code b.a.heartbeats}) are walked one alias at a time. This keeps
 *       {@code MirrorClient.replicationHops}, {@code upstreamClusters} and {@code heartbeatTopics} working.
 *       Only {@code heartbeats} and names ending in {@code <separator>heartbeats} (with a non-empty alias
 *       before the first separator) are heartbeats topics; unlike Kafka's {@code IdentityReplicationPolicy},
 *       a topic that merely ends in "heartbeats" (e.g. {@code service-heartbeats}) is ordinary.</li>
 *   <li><b>Checkpoints / offset-syncs</b>: Kafka's defaults, {@code <alias>.checkpoints.internal} and
 *       {@code mm2-offset-syncs.<alias>.internal}, whatever the separator; with {@value #MIGRATION_CONFIG}
 *       set to {@code M}, {@code M.<alias>.checkpoints.internal} and {@code mm2-offset-syncs.M.<alias>.internal},
 *       so two migrations into one cluster with the same aliases never share them.</li>
 *   <li><b>Internal topics</b> (never replicated, never renamable), identical on every Kafka version:
 *       names starting with {@code __} or {@code .} (e.g. {@code __consumer_offsets},
 *       {@code __transaction_state}), names ending in {@code .internal} (MM2's offset-syncs, checkpoints and
 *       dedicated-mode Connect topics) or {@code -internal} (Kafka 3.x's Connect convention), and the
 *       Connect worker topics named by {@code offset.storage.topic}, {@code config.storage.topic},
 *       {@code status.storage.topic} (when present in the configuration) or
 *       {@value #INTERNAL_TOPICS_CONFIG}.</li>
 * </ul>
 *
 * <h2>Why {@code upstreamTopic} never returns {@code null}</h2>
 * For a non-null topic this policy never answers {@code null} from {@link #upstreamTopic}, because MM2 uses
 * the answer as a topic name: {@code MirrorSourceConnector} maps every target topic whose {@code topicSource}
 * is the source alias through {@code upstreamTopic} ({@code new TopicPartition(upstreamTopic(t), p)}) to
 * learn which source partitions already exist on the target, which drives topic creation, partition-count
 * sync and topic-config sync; {@code MirrorCheckpointTask} renames checkpointed partitions with
 * {@code topicSource}/{@code originalTopic}/{@code formatRemoteTopic}; {@code MirrorClient}
 * ({@code replicationHops}, {@code upstreamClusters}) walks {@code topicSource}/{@code upstreamTopic} chains.
 * The AWS {@code CustomMM2ReplicationPolicy} sample returned the source alias from {@code topicSource} but
 * {@code null} from {@code upstreamTopic}: that surfaced as {@code NullPointerException}s in the MM2
 * connectors (aws-samples/mirrormaker2-msk-migration issue 12) and, on Kafka versions where it does not
 * throw, makes every replicated topic look missing on the target (creation retried and tasks reconfigured on
 * every refresh, new partitions and topic configs never synced). It also formatted heartbeats without the
 * alias, which breaks heartbeat-based cycle detection and {@code MirrorClient}. Returning the topic itself
 * (an identity hop), as Kafka's own {@code IdentityReplicationPolicy} does, is safe: every caller treats
 * {@code upstreamTopic(t).equals(t)} as the end of the chain.
 *
 * <h2>Configuration</h2>
 * Read in {@link #configure(Map)} from the MM2 connector (or {@code MirrorClient}) configuration:
 * <dl>
 *   <dt>{@value #TOPIC_RENAMES_CONFIG} (default: empty, no renames)</dt>
 *   <dd>Comma-separated {@code source:target} rules, e.g. {@code orders:orders-v2,audit:audit-log}. Each
 *       rule replicates source topic {@code source} to target topic {@code target};
 *       {@code upstreamTopic(target)} returns {@code source}. Whitespace around entries is ignored.
 *       The rules are validated at configure time and a {@link ConfigException} naming this key and the
 *       bad entry is thrown for: a malformed entry (not exactly one {@code :}, empty name, empty entry),
 *       an illegal Kafka topic name (legal characters {@code [a-zA-Z0-9._-]}, at most 249 characters, not
 *       {@code .} or {@code ..}), a topic renamed to itself, a source listed twice, two sources mapped to
 *       the same target (or to targets that collide in Kafka because they differ only by {@code .} vs
 *       {@code _}), a target that is another rule's source (chains and cycles), and renaming to or from a
 *       heartbeats topic or an internal topic.</dd>
 *   <dt>{@value #SEPARATOR_CONFIG} (default {@value #SEPARATOR_DEFAULT})</dt>
 *   <dd>Separator between the source alias and {@code heartbeats} in replicated heartbeats topics, as in
 *       {@code DefaultReplicationPolicy}. It affects nothing else (ordinary topics are not prefixed and the
 *       checkpoints/offset-syncs names always use {@code .}). Must be non-empty, made of legal topic-name
 *       characters.</dd>
 *   <dt>{@value #MIGRATION_CONFIG} (default: unset, Kafka's names)</dt>
 *   <dd>The migration's name ({@code [A-Za-z0-9_-]}, at most 72 characters): it is put before the alias in
 *       the checkpoints and offset-syncs topic names. Every connector of a flow must carry the same value
 *       (the checkpoint connector reads the offset syncs the source connector writes).</dd>
 *   <dt>{@value #SOURCE_CLUSTER_ALIAS_CONFIG} (default: unset)</dt>
 *   <dd>Set by MM2 on every connector; the answer of {@link #topicSource} for ordinary topics.</dd>
 *   <dt>{@value #INTERNAL_TOPICS_CONFIG} (default: empty)</dt>
 *   <dd>Comma-separated extra topic names to treat as internal (never replicated), e.g. the Connect worker's
 *       own config/offset/status topics when they do not follow a naming convention.</dd>
 * </dl>
 *
 * <p><b>Caveat</b>: with identity naming MM2 cannot detect replication cycles for ordinary topics. Never
 * replicate the same topics in both directions (A&rarr;B and B&rarr;A) with this policy; records would loop.
 * Likewise a rename target must not also exist as an unrenamed topic on the source.
 */
public class IdentityMigrationReplicationPolicy implements ReplicationPolicy, Configurable {

    private static final Logger log = LoggerFactory.getLogger(IdentityMigrationReplicationPolicy.class);

    /** Explicit topic renames, {@code old1:new1,old2:new2}. */
    public static final String TOPIC_RENAMES_CONFIG = "replication.policy.topic.renames";
    /** Separator of the alias prefix of replicated heartbeats topics (same key as DefaultReplicationPolicy). */
    public static final String SEPARATOR_CONFIG = "replication.policy.separator";
    public static final String SEPARATOR_DEFAULT = ".";
    /** The MM2 connector key naming the source cluster. */
    public static final String SOURCE_CLUSTER_ALIAS_CONFIG = "source.cluster.alias";
    /** The migration whose checkpoints and offset-syncs topics these are (unset: Kafka's names). */
    public static final String MIGRATION_CONFIG = "replication.policy.migration.name";
    static final int MAX_MIGRATION_NAME_LENGTH = 72;
    private static final Pattern LEGAL_MIGRATION_NAME = Pattern.compile("[A-Za-z0-9_-]+");
    /** Extra exact topic names to treat as internal. */
    public static final String INTERNAL_TOPICS_CONFIG = "replication.policy.internal.topics";
    /** Connect worker keys whose values, when present in the configuration, are internal topics. */
    static final String[] CONNECT_WORKER_TOPIC_CONFIGS = {
        "offset.storage.topic", "config.storage.topic", "status.storage.topic"
    };

    static final String HEARTBEATS_TOPIC = "heartbeats";
    static final int MAX_TOPIC_NAME_LENGTH = 249;
    private static final Pattern LEGAL_TOPIC_CHARS = Pattern.compile("[a-zA-Z0-9._-]+");

    private volatile State state = new State(SEPARATOR_DEFAULT, null, null, Map.of(), Map.of(), Set.of());

    /** Immutable configured state, swapped atomically by {@link #configure(Map)}. */
    private record State(String separator, String sourceClusterAlias, String migration, Map<String, String> renames,
                         Map<String, String> reverseRenames, Set<String> internalTopics) {
    }

    @Override
    public void configure(Map<String, ?> props) {
        String separator = SEPARATOR_DEFAULT;
        Object rawSeparator = props.get(SEPARATOR_CONFIG);
        if (rawSeparator != null) {
            separator = rawSeparator.toString();
            if (separator.isEmpty() || !LEGAL_TOPIC_CHARS.matcher(separator).matches()) {
                throw new ConfigException(SEPARATOR_CONFIG, separator,
                    "the separator must be non-empty and contain only the topic-name characters [a-zA-Z0-9._-]");
            }
        }

        String migration = null;
        Object rawMigration = props.get(MIGRATION_CONFIG);
        if (rawMigration != null && !rawMigration.toString().isBlank()) {
            migration = rawMigration.toString().trim();
            if (migration.length() > MAX_MIGRATION_NAME_LENGTH || !LEGAL_MIGRATION_NAME.matcher(migration).matches()) {
                throw new ConfigException(MIGRATION_CONFIG, migration, "a migration name is 1-"
                    + MAX_MIGRATION_NAME_LENGTH + " characters of [A-Za-z0-9_-] (no '.': it is part of topic names)");
            }
        }

        Object rawAlias = props.get(SOURCE_CLUSTER_ALIAS_CONFIG);
        String alias = rawAlias == null || rawAlias.toString().isBlank() ? null : rawAlias.toString().trim();

        Set<String> internal = new LinkedHashSet<>();
        for (String key : CONNECT_WORKER_TOPIC_CONFIGS) {
            Object value = props.get(key);
            if (value != null && !value.toString().isBlank()) {
                internal.add(value.toString().trim());
            }
        }
        for (String entry : splitList(props.get(INTERNAL_TOPICS_CONFIG))) {
            if (!entry.isEmpty()) {
                internal.add(entry);
            }
        }

        // Validation needs the separator and internal topics of the new configuration.
        State candidate = new State(separator, alias, migration, Map.of(), Map.of(), Set.copyOf(internal));
        Map<String, String> renames = parseRenames(props.get(TOPIC_RENAMES_CONFIG), candidate);
        Map<String, String> reverse = new HashMap<>();
        renames.forEach((from, to) -> reverse.put(to, from));

        state = new State(separator, alias, migration, Collections.unmodifiableMap(renames), Map.copyOf(reverse),
            candidate.internalTopics());
        if (!renames.isEmpty()) {
            log.info("Replicating with identity topic names; renames: {}", renames);
        }
        if (migration != null) {
            log.info("Checkpoints and offset syncs of migration '{}': {}, {}", migration,
                checkpointsTopic("<alias>"), offsetSyncsTopic("<alias>"));
        }
        if (!SEPARATOR_DEFAULT.equals(separator)) {
            log.info("Using heartbeats alias separator '{}'", separator);
        }
    }

    /** The configured rename rules (source name to target name), in configuration order. */
    public Map<String, String> topicRenames() {
        return state.renames();
    }

    @Override
    public String formatRemoteTopic(String sourceClusterAlias, String topic) {
        if (topic == null) {
            return null;
        }
        State s = state;
        if (isHeartbeats(topic, s)) {
            return sourceClusterAlias + s.separator() + topic;
        }
        return s.renames().getOrDefault(topic, topic);
    }

    @Override
    public String topicSource(String topic) {
        if (topic == null) {
            return null;
        }
        State s = state;
        String heartbeatsSource = remoteHeartbeatsSource(topic, s);
        if (heartbeatsSource != null) {
            return heartbeatsSource;
        }
        if (HEARTBEATS_TOPIC.equals(topic) || isInternal(topic, s) || s.renames().containsKey(topic)) {
            // local heartbeats, never-replicated internal topics and source-side names of renamed topics
            return null;
        }
        return s.sourceClusterAlias();
    }

    @Override
    public String upstreamTopic(String topic) {
        if (topic == null) {
            return null;
        }
        State s = state;
        String heartbeatsSource = remoteHeartbeatsSource(topic, s);
        if (heartbeatsSource != null) {
            return topic.substring(heartbeatsSource.length() + s.separator().length());
        }
        // identity hop (never null, see class Javadoc), or back to the pre-rename name
        return s.reverseRenames().getOrDefault(topic, topic);
    }

    @Override
    public String heartbeatsTopic() {
        return HEARTBEATS_TOPIC;
    }

    @Override
    public String offsetSyncsTopic(String clusterAlias) {
        return "mm2-offset-syncs." + namespaced(clusterAlias) + ".internal";
    }

    @Override
    public String checkpointsTopic(String clusterAlias) {
        return namespaced(clusterAlias) + ".checkpoints.internal";
    }

    /** The configured migration name, or null (Kafka's checkpoints and offset-syncs names). */
    public String migrationName() {
        return state.migration();
    }

    private String namespaced(String clusterAlias) {
        String migration = state.migration();
        return migration == null ? clusterAlias : migration + "." + clusterAlias;
    }

    @Override
    public boolean isHeartbeatsTopic(String topic) {
        return isHeartbeats(topic, state);
    }

    @Override
    public boolean isCheckpointsTopic(String topic) {
        return topic != null && topic.endsWith(".checkpoints.internal");
    }

    @Override
    public boolean isMM2InternalTopic(String topic) {
        return topic != null && topic.endsWith(".internal");
    }

    @Override
    public boolean isInternalTopic(String topic) {
        return isInternal(topic, state);
    }

    private static boolean isHeartbeats(String topic, State s) {
        return topic != null && (HEARTBEATS_TOPIC.equals(topic) || remoteHeartbeatsSource(topic, s) != null);
    }

    private static boolean isInternal(String topic, State s) {
        if (topic == null) {
            return false;
        }
        boolean kafkaInternal = topic.startsWith("__") || topic.startsWith(".");
        // MM2 topics (mm2-offset-syncs.*.internal, *.checkpoints.internal, mm2-*.<alias>.internal)
        // and Kafka 3.x's "default Connect topic" convention (*-internal, *.internal)
        boolean mm2OrConnectConvention = topic.endsWith(".internal") || topic.endsWith("-internal");
        return kafkaInternal || mm2OrConnectConvention || s.internalTopics().contains(topic);
    }

    /** The alias of a replicated heartbeats topic {@code <alias><sep>...heartbeats}, else null. */
    private static String remoteHeartbeatsSource(String topic, State s) {
        String sep = s.separator();
        if (!topic.endsWith(sep + HEARTBEATS_TOPIC)) {
            return null;
        }
        int end = topic.indexOf(sep);
        if (end <= 0 || end + sep.length() + HEARTBEATS_TOPIC.length() > topic.length()) {
            return null;
        }
        return topic.substring(0, end);
    }

    private static Map<String, String> parseRenames(Object raw, State candidate) {
        Map<String, String> renames = new LinkedHashMap<>();
        if (raw == null) {
            return renames;
        }
        String value = raw instanceof Collection<?> c ? String.join(",", c.stream().map(String::valueOf).toList())
            : raw.toString();
        if (value.isBlank()) {
            return renames;
        }
        Map<String, String> entryOfTarget = new HashMap<>();
        Map<String, String> entryOfUnifiedTarget = new HashMap<>();
        Map<String, String> entryOfSource = new HashMap<>();
        for (String rawEntry : value.split(",", -1)) {
            String entry = rawEntry.trim();
            if (entry.isEmpty()) {
                throw renameError(value, "empty entry (stray comma?); expected source:target[,source:target...]");
            }
            String[] parts = entry.split(":", -1);
            if (parts.length != 2) {
                throw renameError(value, "entry '" + entry + "' must be of the form source:target (exactly one ':')");
            }
            String from = parts[0].trim();
            String to = parts[1].trim();
            if (from.isEmpty() || to.isEmpty()) {
                throw renameError(value, "entry '" + entry + "' has an empty " + (from.isEmpty() ? "source" : "target")
                    + " topic name");
            }
            checkTopicName(value, entry, from);
            checkTopicName(value, entry, to);
            if (from.equals(to)) {
                throw renameError(value, "entry '" + entry + "' renames topic '" + from + "' to itself");
            }
            for (String name : new String[] {from, to}) {
                if (isHeartbeats(name, candidate)) {
                    throw renameError(value, "entry '" + entry + "': heartbeats topic '" + name
                        + "' cannot be renamed or be a rename target (MM2 heartbeats must keep their names)");
                }
                if (isInternal(name, candidate)) {
                    throw renameError(value, "entry '" + entry + "': internal topic '" + name
                        + "' cannot be renamed or be a rename target");
                }
            }
            if (entryOfSource.containsKey(from)) {
                throw renameError(value, "source topic '" + from + "' is renamed twice: '" + entryOfSource.get(from)
                    + "' and '" + entry + "'");
            }
            if (entryOfTarget.containsKey(to)) {
                throw renameError(value, "entries '" + entryOfTarget.get(to) + "' and '" + entry
                    + "' both rename to target topic '" + to + "'");
            }
            String unified = to.replace('.', '_');
            if (entryOfUnifiedTarget.containsKey(unified)) {
                throw renameError(value, "entries '" + entryOfUnifiedTarget.get(unified) + "' and '" + entry
                    + "' rename to target topics that collide in Kafka (they differ only by '.' vs '_')");
            }
            entryOfSource.put(from, entry);
            entryOfTarget.put(to, entry);
            entryOfUnifiedTarget.put(unified, entry);
            renames.put(from, to);
        }
        for (Map.Entry<String, String> rule : renames.entrySet()) {
            String to = rule.getValue();
            if (renames.containsKey(to)) {
                throw renameError(value, "entry '" + entryOfSource.get(rule.getKey()) + "' renames to '" + to
                    + "', which entry '" + entryOfSource.get(to)
                    + "' renames again; chained or cyclic renames are not allowed");
            }
        }
        return renames;
    }

    private static void checkTopicName(String value, String entry, String name) {
        String problem = null;
        if (name.equals(".") || name.equals("..")) {
            problem = "a topic name cannot be '.' or '..'";
        } else if (name.length() > MAX_TOPIC_NAME_LENGTH) {
            problem = "a topic name is at most " + MAX_TOPIC_NAME_LENGTH + " characters (this one has "
                + name.length() + ")";
        } else if (!LEGAL_TOPIC_CHARS.matcher(name).matches()) {
            problem = "a topic name may contain only [a-zA-Z0-9._-]";
        }
        if (problem != null) {
            throw renameError(value, "entry '" + entry + "': '" + name + "' is not a valid Kafka topic name: " + problem);
        }
    }

    private static ConfigException renameError(String value, String message) {
        return new ConfigException(TOPIC_RENAMES_CONFIG, value, message);
    }

    private static List<String> splitList(Object raw) {
        if (raw == null) {
            return List.of();
        }
        if (raw instanceof Collection<?> c) {
            return c.stream().map(x -> String.valueOf(x).trim()).toList();
        }
        return Arrays.stream(raw.toString().split(",")).map(String::trim).toList();
    }

    @Override
    public String toString() {
        State s = state;
        return "IdentityMigrationReplicationPolicy{separator='" + s.separator() + "', sourceClusterAlias="
            + s.sourceClusterAlias() + ", migration=" + s.migration() + ", renames=" + s.renames() + ", internalTopics=" + s.internalTopics() + "}";
    }
}
