package io.mskmigrate.connect;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.mskmigrate.connect.policy.MirrorMakerOverridePolicy;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.connect.mirror.MirrorSourceConnector;

/**
 * Prints, as JSON, every config key Kafka itself defines for the clients and the connector that
 * msk-migrate lets operators override: ProducerConfig, ConsumerConfig and MirrorSourceConnector
 * (which includes Connect's own connector keys). Each key carries its type, default and validator,
 * read from the ConfigDef of the jars on the classpath: nothing here is typed by hand.
 *
 * <p>Run: {@code java -cp <connect classpath> io.mskmigrate.connect.ConfigKeys}
 */
public final class ConfigKeys {
    private ConfigKeys() {}

    static Map<String, Object> describe(ConfigDef def) {
        Map<String, Object> out = new TreeMap<>();
        for (ConfigDef.ConfigKey key : def.configKeys().values()) {
            Map<String, Object> k = new LinkedHashMap<>();
            k.put("type", key.type.name());
            Object dflt = key.hasDefault() ? key.defaultValue : null;
            k.put("default", dflt == null ? null : ConfigDef.convertToString(dflt, key.type));
            k.put("validator", key.validator == null ? null : key.validator.toString());
            out.put(key.name, k);
        }
        return out;
    }

    public static Map<String, Object> all() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("kafka_version", AppInfoParser.getVersion());
        out.put("source", "ConfigDef of org.apache.kafka:kafka-clients (ProducerConfig, ConsumerConfig) and "
                + "org.apache.kafka:connect-mirror (MirrorSourceConnector.config()) " + AppInfoParser.getVersion()
                + ", printed by io.mskmigrate.connect.ConfigKeys");
        out.put("producer", describe(ProducerConfig.configDef()));
        out.put("consumer", describe(ConsumerConfig.configDef()));
        out.put("mirror_source", describe(new MirrorSourceConnector().config()));
        // The producer keys the worker's override policy lets a connector set (producer.override.*): the
        // Python config check refuses any other key at load time instead of at apply time.
        out.put("producer_override_allowed", new TreeSet<>(MirrorMakerOverridePolicy.PRODUCER_TUNING));
        return out;
    }

    public static void main(String[] args) throws Exception {
        System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(all()));
    }
}
