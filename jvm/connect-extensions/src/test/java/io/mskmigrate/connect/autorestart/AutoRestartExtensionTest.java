package io.mskmigrate.connect.autorestart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.connect.health.ConnectClusterState;
import org.apache.kafka.connect.health.ConnectorHealth;
import org.apache.kafka.connect.health.ConnectorState;
import org.apache.kafka.connect.health.ConnectorType;
import org.apache.kafka.connect.health.TaskState;
import org.apache.kafka.connect.rest.ConnectRestExtensionContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The extension against a real HTTP listener standing in for the worker's REST API. */
class AutoRestartExtensionTest {
    private HttpServer server;
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private AutoRestartExtension ext;
    private volatile String taskState = "FAILED";
    private volatile String connectorWorker = "10.0.0.1:8083";

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI() + " auth="
                    + exchange.getRequestHeaders().getFirst("Authorization"));
            byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(202, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
        if (ext != null) {
            ext.close();
        }
    }

    private AutoRestartExtension extension(Map<String, String> extra) {
        AutoRestartExtension e = new AutoRestartExtension();
        Map<String, Object> cfg = new java.util.HashMap<>(Map.of(
                "listeners", "http://0.0.0.0:8083",
                "rest.advertised.host.name", "10.0.0.1",
                "rest.advertised.port", "8083",
                AutoRestartExtension.PREFIX + "rest.url", "http://127.0.0.1:" + server.getAddress().getPort(),
                AutoRestartExtension.PREFIX + "initial.backoff.ms", "1000",
                AutoRestartExtension.PREFIX + "max.backoff.ms", "4000",
                AutoRestartExtension.PREFIX + "max.restarts", "2",
                AutoRestartExtension.PREFIX + "enabled", "false"));
        cfg.putAll(extra);
        e.configure(cfg);
        ConnectClusterState state = new ConnectClusterState() {
            @Override
            public Collection<String> connectors() {
                return List.of("mm2-source");
            }

            @Override
            public ConnectorHealth connectorHealth(String name) {
                return new ConnectorHealth(name, new ConnectorState("RUNNING", connectorWorker, null),
                        Map.of(0, new TaskState(0, "RUNNING", "10.0.0.2:8083", null),
                               1, new TaskState(1, taskState, "10.0.0.2:8083", "boom")),
                        ConnectorType.SOURCE);
            }
        };
        // A proxy, not an anonymous class: configurable() is javax.ws.rs in Kafka 3.x and jakarta.ws.rs in 4.x.
        ConnectRestExtensionContext ctx = (ConnectRestExtensionContext) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {ConnectRestExtensionContext.class},
                (proxy, method, args) -> "clusterState".equals(method.getName()) ? state : null);
        e.register(ctx);
        ext = e;
        return e;
    }

    @Test
    void wildcardListenerBecomesLoopbackAndWorkerIdIsTheAdvertisedAddress() {
        assertEquals("http://127.0.0.1:8083", AutoRestartExtension.firstListener("http://0.0.0.0:8083,https://h:8443"));
        assertEquals("http://127.0.0.1:8083", AutoRestartExtension.firstListener("http://:8083"));
        AutoRestartExtension e = extension(Map.of());
        assertEquals("10.0.0.1:8083", e.workerId());
    }

    @Test
    void theConnectorsWorkerRestartsOnlyFailedTasksAfterTheBackoffWithBasicAuth() throws Exception {
        AutoRestartExtension e = extension(Map.of(AutoRestartExtension.PREFIX + "rest.user", "ops",
                AutoRestartExtension.PREFIX + "rest.password", "s3cret"));
        e.check(0);
        assertEquals(0, requests.size(), "restarted before the back-off passed");
        e.check(1000);
        assertEquals(1, requests.size());
        String expectedAuth = "Basic " + Base64.getEncoder().encodeToString("ops:s3cret".getBytes(StandardCharsets.UTF_8));
        assertEquals("POST /connectors/mm2-source/restart?includeTasks=true&onlyFailed=true auth=" + expectedAuth, requests.get(0));
        Object restarts = ManagementFactory.getPlatformMBeanServer()
                .getAttribute(AutoRestartExtension.objectName("mm2-source"), "Restarts");
        assertEquals(1L, restarts);
        // cap = 2: one more restart after 2 s, then it is left FAILED and counted as exhausted
        e.check(2500);
        assertEquals(1, requests.size());
        e.check(3000);
        assertEquals(2, requests.size());
        e.check(100_000);
        assertEquals(2, requests.size());
        assertEquals(1, ManagementFactory.getPlatformMBeanServer()
                .getAttribute(AutoRestartExtension.objectName("mm2-source"), "Exhausted"));
    }

    @Test
    void aWorkerThatDoesNotRunTheConnectorNeverSendsRestarts() {
        connectorWorker = "10.0.0.9:8083";
        AutoRestartExtension e = extension(Map.of());
        e.check(0);
        e.check(60_000);
        assertEquals(0, requests.size());
        assertTrue(requests.isEmpty());
    }

    @Test
    void aRecoveredTaskIsNotRestartedAgain() {
        AutoRestartExtension e = extension(Map.of());
        e.check(0);
        e.check(1000);
        assertEquals(1, requests.size());
        taskState = "RUNNING";
        e.check(5000);
        e.check(60_000);
        assertEquals(1, requests.size());
    }

    @Test
    void credentialsComeFromTheBasicAuthCredentialsFileWhenNoUserIsConfigured() throws Exception {
        java.nio.file.Path file = java.nio.file.Files.createTempFile("rest-credentials", ".properties");
        try {
            java.nio.file.Files.writeString(file, "ops=s3cret\n");
            Map.Entry<String, String> c = AutoRestartExtension.firstCredential(file);
            assertEquals("ops", c.getKey());
            assertEquals("s3cret", c.getValue());
            assertEquals(null, AutoRestartExtension.firstCredential(file.resolveSibling("no-such-file")));
        } finally {
            java.nio.file.Files.deleteIfExists(file);
        }
    }
}
