package io.mskmigrate.connect.marks;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.connect.components.Versioned;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.util.SimpleConfig;

/**
 * Adds one header whose value is the UTF-8 bytes of a literal, after the record's own headers: the copy mark of
 * msk-migrate's active/active and forwarding flows (python/msk_migrate/topology/marks.py).
 *
 * <p>Why not Kafka's {@code InsertHeader}: it adds a header with a STRING schema, and MM2 flows convert headers with
 * {@code ByteArrayConverter} (records are copied byte for byte), which refuses any schema but BYTES; Kafka's
 * {@code SimpleHeaderConverter} would accept the string but rewrite every byte[] header of the record as Base64. This
 * transform takes the same settings as {@code InsertHeader} ({@code header}, {@code value.literal}) and adds the
 * header with a BYTES schema, so the converter writes exactly the literal's UTF-8 bytes and leaves the rest untouched.
 */
public class InsertBytesHeader<R extends ConnectRecord<R>> implements Transformation<R>, Versioned {
    public static final String HEADER_FIELD = "header";
    public static final String VALUE_LITERAL_FIELD = "value.literal";

    public static final ConfigDef CONFIG_DEF = new ConfigDef()
            .define(HEADER_FIELD, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(),
                    ConfigDef.Importance.HIGH, "The header's key.")
            .define(VALUE_LITERAL_FIELD, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonNullValidator(),
                    ConfigDef.Importance.HIGH, "The header's value, written as its UTF-8 bytes on every record.");

    private String header;
    private byte[] value;

    @Override
    public void configure(Map<String, ?> props) {
        SimpleConfig config = new SimpleConfig(CONFIG_DEF, props);
        header = config.getString(HEADER_FIELD);
        value = config.getString(VALUE_LITERAL_FIELD).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public R apply(R record) {
        if (record == null) {
            return null;
        }
        Headers headers = record.headers().duplicate();
        headers.add(header, value.clone(), Schema.BYTES_SCHEMA);
        return record.newRecord(record.topic(), record.kafkaPartition(), record.keySchema(), record.key(),
                record.valueSchema(), record.value(), record.timestamp(), headers);
    }

    @Override
    public ConfigDef config() {
        return CONFIG_DEF;
    }

    @Override
    public String version() {
        return AppInfoParser.getVersion();
    }

    @Override
    public void close() {
    }
}
