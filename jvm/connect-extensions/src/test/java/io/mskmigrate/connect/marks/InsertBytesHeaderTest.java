package io.mskmigrate.connect.marks;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.converters.ByteArrayConverter;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Filter;
import org.apache.kafka.connect.transforms.InsertHeader;
import org.apache.kafka.connect.transforms.predicates.HasHeaderKey;
import org.junit.jupiter.api.Test;

class InsertBytesHeaderTest {
    static final String MARK_A = "msk-migrate.copied-from.a";
    static final String MARK_B = "msk-migrate.copied-from.b";

    /** A record as MirrorSourceTask builds it: byte[] key and value, the consumer record's headers as BYTES. */
    static SourceRecord copied(String... headerKeys) {
        ConnectHeaders headers = new ConnectHeaders();
        headers.addBytes("app", new byte[] {0, (byte) 0xff, 7});
        for (String k : headerKeys) {
            headers.addBytes(k, k.substring(k.lastIndexOf('.') + 1).getBytes(StandardCharsets.UTF_8));
        }
        return new SourceRecord(Map.of("cluster", "a"), Map.of("offset", 0L), "orders", 0,
                Schema.OPTIONAL_BYTES_SCHEMA, "k".getBytes(StandardCharsets.UTF_8),
                Schema.OPTIONAL_BYTES_SCHEMA, "v".getBytes(StandardCharsets.UTF_8), 1L, headers);
    }

    static InsertBytesHeader<SourceRecord> mark(String header, String literal) {
        InsertBytesHeader<SourceRecord> t = new InsertBytesHeader<>();
        t.configure(Map.of("header", header, "value.literal", literal));
        return t;
    }

    /** What the worker writes to Kafka for each header (AbstractWorkerSourceTask.convertHeaderFor). */
    static List<Map.Entry<String, byte[]>> converted(SourceRecord r) {
        ByteArrayConverter converter = new ByteArrayConverter();
        converter.configure(Map.of("converter.type", "header"));
        List<Map.Entry<String, byte[]>> out = new ArrayList<>();
        for (Header h : r.headers()) {
            out.add(Map.entry(h.key(), converter.fromConnectHeader(r.topic(), h.key(), h.schema(), h.value())));
        }
        return out;
    }

    @Test
    void markIsAppendedAfterTheRecordsOwnHeadersAsTheLiteralsUtf8BytesThroughByteArrayConverter() {
        List<Map.Entry<String, byte[]>> out = converted(mark(MARK_A, "a").apply(copied()));
        assertEquals(2, out.size());
        assertEquals("app", out.get(0).getKey());
        assertArrayEquals(new byte[] {0, (byte) 0xff, 7}, out.get(0).getValue());
        assertEquals(MARK_A, out.get(1).getKey());
        assertArrayEquals("a".getBytes(StandardCharsets.UTF_8), out.get(1).getValue());
    }

    @Test
    void kafkasInsertHeaderIsRefusedByTheByteArrayHeaderConverterMm2FlowsUse() {
        InsertHeader<SourceRecord> kafkas = new InsertHeader<>();
        kafkas.configure(Map.of("header", MARK_A, "value.literal", "a"));
        DataException e = assertThrows(DataException.class, () -> converted(kafkas.apply(copied())));
        assertEquals("Invalid schema type for ByteArrayConverter: STRING", e.getMessage());
    }

    /** Connect's TransformationStage (package-private): the predicate decides whether the transform applies. */
    static SourceRecord stage(HasHeaderKey<SourceRecord> predicate, Filter<SourceRecord> filter, SourceRecord r) {
        return predicate.test(r) ? filter.apply(r) : r;
    }

    @Test
    void filterOnTheTargetsMarkDropsOnlyRecordsCopiedFromTheTarget() {
        HasHeaderKey<SourceRecord> fromB = new HasHeaderKey<>();
        fromB.configure(Map.of("name", MARK_B));
        Filter<SourceRecord> skip = new Filter<>();
        skip.configure(Map.of());
        assertNull(stage(fromB, skip, copied(MARK_B)));
        assertNull(stage(fromB, skip, copied("msk-migrate.copied-from.c", MARK_B)));
        assertEquals("orders", stage(fromB, skip, copied()).topic());
        assertEquals("orders", stage(fromB, skip, copied(MARK_A)).topic());
    }

    @Test
    void forwardedRecordCarriesEveryHopsMarkInPathOrder() {
        SourceRecord atC = mark(MARK_B, "b").apply(mark(MARK_A, "a").apply(copied()));
        List<String> keys = converted(atC).stream().map(Map.Entry::getKey).toList();
        assertEquals(List.of("app", MARK_A, MARK_B), keys);
    }

    @Test
    void emptyHeaderNameIsRefusedAtConfigure() {
        assertThrows(org.apache.kafka.common.config.ConfigException.class, () -> mark("", "a"));
    }
}
