package io.mskmigrate.connect.faults;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.transforms.Transformation;

/**
 * Fault injection for the reliability suite (tests/faults): a pass-through transformation that fails
 * its task ONCE, after {@code after.records} records, the way a transient error does. "Once" is
 * remembered in {@code marker.file} (created atomically by the failing call), so the restarted task,
 * in this worker or another, passes every record. Inert unless a connector config names it.
 */
public class FailOnce<R extends ConnectRecord<R>> implements Transformation<R> {
    public static final String MARKER = "marker.file";
    public static final String AFTER = "after.records";

    private static final ConfigDef DEF = new ConfigDef()
            .define(MARKER, ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "File created when the fault fires; present = never fail again.")
            .define(AFTER, ConfigDef.Type.LONG, 1000L, ConfigDef.Importance.MEDIUM, "Records passed before the fault fires.");

    private Path marker;
    private long after;
    private final AtomicLong seen = new AtomicLong();

    @Override
    public void configure(Map<String, ?> configs) {
        Object m = configs.get(MARKER);
        if (m == null) {
            throw new ConnectException(MARKER + " is required");
        }
        marker = Path.of(String.valueOf(m));
        Object a = configs.get(AFTER);
        after = a == null ? 1000L : Long.parseLong(String.valueOf(a));
    }

    @Override
    public R apply(R record) {
        if (seen.incrementAndGet() > after && !Files.exists(marker)) {
            try {
                Files.createFile(marker);
            } catch (FileAlreadyExistsException e) {
                return record; // another task fired it first
            } catch (IOException e) {
                throw new ConnectException("FailOnce cannot create " + marker, e);
            }
            throw new ConnectException("FailOnce: injected transient failure after " + after + " records (" + marker + ")");
        }
        return record;
    }

    @Override
    public ConfigDef config() {
        return DEF;
    }

    @Override
    public void close() {}
}
