// A producer that keeps writing to one topic until told to stop (a line on stdin, or the deadline), for the
// config fence's tests: run with the java source launcher on a kafka-clients classpath of the harness
// (2.8, 3.9, 4.1): java -cp <classpath> FenceProbe.java <bootstrap> <topic> <idempotent|transactional|acks0|acks1|acksall> <seconds>
// It prints one line per outcome kind: "acked <n>" and "error <ExceptionClass> <n>", and "retries <n>" (the
// producer's record-retry-total metric: how often it resent a batch), then "done".
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class FenceProbe {
    public static void main(String[] a) throws Exception {
        String bootstrap = a[0], topic = a[1], mode = a[2];
        long deadline = System.currentTimeMillis() + Long.parseLong(a[3]) * 1000;
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        p.put("linger.ms", "20");
        p.put("delivery.timeout.ms", "6000");
        p.put("request.timeout.ms", "3000");
        p.put("max.block.ms", "6000");
        boolean tx = mode.equals("transactional");
        if (mode.equals("idempotent") || tx) { p.put("enable.idempotence", "true"); p.put("acks", "all"); }
        else { p.put("enable.idempotence", "false"); p.put("acks", mode.equals("acks0") ? "0" : mode.equals("acks1") ? "1" : "all"); }
        if (tx) { p.put("transactional.id", "fence-probe-" + topic); p.put("transaction.timeout.ms", "10000"); }
        AtomicLong acked = new AtomicLong();
        Map<String, AtomicLong> errors = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread reader = new Thread(() -> { try { System.in.read(); } catch (Exception e) { } stop.set(true); });
        reader.setDaemon(true);
        reader.start();
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p);
        Callback cb = (md, e) -> {
            if (e == null) acked.incrementAndGet();
            else errors.computeIfAbsent(e.getClass().getSimpleName(), k -> new AtomicLong()).incrementAndGet();
        };
        if (tx) producer.initTransactions();
        int i = 0;
        System.out.println("started");
        System.out.flush();
        while (!stop.get() && System.currentTimeMillis() < deadline) {
            try {
                if (tx) {
                    producer.beginTransaction();
                    for (int k = 0; k < 5; k++) producer.send(new ProducerRecord<>(topic, ("k" + i).getBytes(), ("v" + i++).getBytes()), cb);
                    producer.commitTransaction();
                    Thread.sleep(1000);  // between transactions: a gap longer than the fence takes to go on (check, set, check again)
                } else {
                    // batches of several records, so a refused batch is split (Java) before each record is refused again
                    for (int k = 0; k < 20; k++) producer.send(new ProducerRecord<>(topic, ("k" + i).getBytes(), ("v" + i++).getBytes()), cb);
                    Thread.sleep(50);
                }
            } catch (Exception e) {
                errors.computeIfAbsent((e.getCause() != null ? e.getCause() : e).getClass().getSimpleName(), k -> new AtomicLong()).incrementAndGet();
                if (tx) {
                    try { producer.abortTransaction(); } catch (Exception e2) {
                        errors.computeIfAbsent("abort:" + e2.getClass().getSimpleName(), k -> new AtomicLong()).incrementAndGet();
                        break;
                    }
                }
                Thread.sleep(200);
            }
        }
        try { producer.flush(); } catch (Exception e) { }
        double retries = 0;
        for (Map.Entry<MetricName, ? extends Metric> m : producer.metrics().entrySet())
            if (m.getKey().name().equals("record-retry-total") && m.getKey().group().equals("producer-metrics"))
                retries = ((Number) m.getValue().metricValue()).doubleValue();
        producer.close(java.time.Duration.ofSeconds(5));
        System.out.println("acked " + acked.get());
        for (Map.Entry<String, AtomicLong> e : errors.entrySet()) System.out.println("error " + e.getKey() + " " + e.getValue().get());
        System.out.println("retries " + (long) retries);
        System.out.println("done");
    }
}
