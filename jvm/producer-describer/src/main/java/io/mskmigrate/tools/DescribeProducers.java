// The producers of Kafka partitions, through the Java admin client's DescribeProducers (KIP-664; brokers 2.8+):
// what the watch and the producer gate of msk-migrate name for every partition still written
// (python/msk_migrate/runbook/producers/describe.py). One file, no dependency but kafka-clients (3.0+) and slf4j-api:
// it runs with the java source launcher on a classpath the product already has (the Connect worker's libs, the
// local harness's), nothing to build:
//
//   java -cp <kafka-clients classpath> DescribeProducers.java <timeout-ms> <topic> <partition> [<topic> <partition> ...]
//
// The client settings (bootstrap.servers, security.protocol, SASL/TLS; secrets included) come as Java properties on
// stdin, never on the command line. Output on stdout, one line per answer, each starting with "MSKMIGRATE " (a logging
// backend on the classpath may print other lines):
//   MSKMIGRATE {"topic":..,"partition":..,"producers":[{"producer_id":..,"producer_epoch":..,"last_sequence":..,
//               "last_timestamp":..,"coordinator_epoch":..|null,"current_transaction_start_offset":..|null}]}
//   MSKMIGRATE {"topic":..,"partition":..,"error":"<ExceptionClass>: <message>"}
// Exit 0 when the admin client ran (per-partition refusals are lines), 2 on bad arguments.
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

public class DescribeProducers {
    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    public static void main(String[] a) throws Exception {
        if (a.length < 3 || (a.length - 1) % 2 != 0) {
            System.err.println("usage: DescribeProducers <timeout-ms> <topic> <partition> [...] (client properties on stdin)");
            System.exit(2);
        }
        int timeoutMs = Integer.parseInt(a[0]);
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 1; i < a.length; i += 2) tps.add(new TopicPartition(a[i], Integer.parseInt(a[i + 1])));
        Properties p = new Properties();
        p.load(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        p.putIfAbsent("client.id", "msk-migrate-describe-producers");
        p.put("request.timeout.ms", String.valueOf(timeoutMs));
        p.put("default.api.timeout.ms", String.valueOf(timeoutMs));
        long deadline = System.currentTimeMillis() + timeoutMs;
        try (Admin admin = Admin.create(p)) {
            DescribeProducersResult res = admin.describeProducers(tps,
                    new DescribeProducersOptions().timeoutMs(timeoutMs));
            for (TopicPartition tp : tps) {
                String head = "{\"topic\":" + q(tp.topic()) + ",\"partition\":" + tp.partition();
                KafkaFuture<DescribeProducersResult.PartitionProducerState> f = res.partitionResult(tp);
                try {
                    long left = Math.max(1, deadline - System.currentTimeMillis());
                    DescribeProducersResult.PartitionProducerState st = f.get(left, TimeUnit.MILLISECONDS);
                    StringJoiner rows = new StringJoiner(",", "[", "]");
                    for (ProducerState ps : st.activeProducers()) {
                        rows.add("{\"producer_id\":" + ps.producerId() + ",\"producer_epoch\":" + ps.producerEpoch()
                                + ",\"last_sequence\":" + ps.lastSequence() + ",\"last_timestamp\":" + ps.lastTimestamp()
                                + ",\"coordinator_epoch\":" + (ps.coordinatorEpoch().isPresent() ? ps.coordinatorEpoch().getAsInt() : "null")
                                + ",\"current_transaction_start_offset\":"
                                + (ps.currentTransactionStartOffset().isPresent() ? ps.currentTransactionStartOffset().getAsLong() : "null")
                                + "}");
                    }
                    System.out.println("MSKMIGRATE " + head + ",\"producers\":" + rows + "}");
                } catch (ExecutionException e) {
                    Throwable c = e.getCause() == null ? e : e.getCause();
                    System.out.println("MSKMIGRATE " + head + ",\"error\":" + q(c.getClass().getSimpleName() + ": " + c.getMessage()) + "}");
                } catch (java.util.concurrent.TimeoutException e) {
                    System.out.println("MSKMIGRATE " + head + ",\"error\":" + q("TimeoutException: no answer within " + timeoutMs + " ms") + "}");
                }
            }
        }
        System.out.flush();
    }
}
