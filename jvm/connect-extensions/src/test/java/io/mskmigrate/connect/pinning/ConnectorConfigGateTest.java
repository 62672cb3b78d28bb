package io.mskmigrate.connect.pinning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.mskmigrate.connect.pinning.ConnectorConfigGate.CurrentConfigs;
import io.mskmigrate.connect.pinning.ConnectorConfigGate.Refusal;
import io.mskmigrate.connect.pinning.ConnectorConfigGate.Request;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The gate on requests as Jersey matches them: route template plus decoded path parameters. */
class ConnectorConfigGateTest {
    static final String VARIABLE = "${env:MM2_SOURCE_SASL_PASSWORD}";
    static final ObjectMapper JSON = new ObjectMapper();

    final ConnectorConfigGate gate = new ConnectorConfigGate(PinnedClusters.fromWorkerConfig(PinnedClustersTest.workerConfig()));

    static Request at(String method, String template, String... params) {
        Map<String, List<String>> p = new LinkedHashMap<>();
        for (int i = 0; i < params.length; i += 2) {
            p.put(params[i], List.of(params[i + 1]));
        }
        return new Request(method, template, p);
    }

    /** Jersey hands the templates innermost first; the filter joins them outermost first. */
    static Request config(String method, String name) {
        return at(method, "/connectors//{connector}/config", "connector", name);
    }

    static byte[] json(Object value) throws Exception {
        return JSON.writeValueAsBytes(value);
    }

    static final CurrentConfigs NONE = name -> {
        throw new AssertionError("the herder is asked only for a PATCH");
    };

    Map<String, String> stored(String name) {
        Map<String, String> c = new LinkedHashMap<>(PinnedClustersTest.rendered());
        c.put("name", name);
        return c;
    }

    @Test
    void aConnectorNameOutsideTheCharsetIsRefusedOnEveryRouteAndMethod() {
        // As Jersey decodes the path parameter: %24%7Benv%3A...%7D arrives as the variable, %2524... as %24...
        for (String name : List.of(VARIABLE, "%24%7Benv%3AMM2_SOURCE_SASL_PASSWORD%7D", "a b", "a/b", "a:b", "é", " mm2", "")) {
            for (String[] route : new String[][] {{"PUT", "/connectors/{connector}/config"}, {"PATCH", "/connectors/{connector}/config"},
                    {"DELETE", "/connectors/{connector}"}, {"POST", "/connectors/{connector}/restart"},
                    {"PUT", "/connectors/{connector}/pause"}, {"PUT", "/connectors/{connector}/resume"},
                    {"PUT", "/connectors/{connector}/stop"}, {"POST", "/connectors/{connector}/tasks/{task}/restart"},
                    {"DELETE", "/connectors/{connector}/offsets"}, {"PATCH", "/connectors/{connector}/offsets"},
                    {"PUT", "/connectors/{connector}/topics/reset"}, {"GET", "/connectors/{connector}/status"}}) {
                Refusal r = gate.routeRefusal(at(route[0], route[1], "connector", name, "task", "0"));
                assertNotNull(r, route[0] + " " + route[1] + " " + name);
                assertEquals(400, r.status());
                assertEquals("the connector name in the path has characters outside [A-Za-z0-9._-]: use only letters, digits, "
                        + "'.', '_' and '-' (percent-encoded or not)", r.message());
            }
        }
        assertNull(gate.routeRefusal(at("DELETE", "/connectors/{connector}", "connector", "mm2-prod.source_1")));
        assertNull(gate.routeRefusal(at("GET", "/connectors")));
    }

    @Test
    void aConnectorRouteWhoseNameParameterIsNotFoundFailsClosed() {
        Refusal r = gate.routeRefusal(at("PUT", "/connectors/{name}/config", "name", "ok"));
        assertEquals(500, r.status());
        assertTrue(r.message().contains("names no 'connector' path parameter"), r.message());
    }

    @Test
    void thePostBodysNameAndTheConfigsNameAreChecked() throws Exception {
        Request post = at("POST", "/connectors");
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", VARIABLE);
        body.put("config", PinnedClustersTest.rendered());
        assertEquals("'name' has characters outside [A-Za-z0-9._-]: use only letters, digits, '.', '_' and '-'",
                gate.configRefusal(post, json(body), NONE).message());
        body.put("name", "mm2-source");
        assertNull(gate.configRefusal(post, json(body), NONE));
        Map<String, String> config = new HashMap<>(PinnedClustersTest.rendered());
        config.put("name", "other");
        body.put("config", config);
        assertEquals("'config.name' differs from the body's 'name' mm2-source: leave it out or make it equal",
                gate.configRefusal(post, json(body), NONE).message());
        config.put("name", VARIABLE);
        assertTrue(gate.configRefusal(post, json(body), NONE).message().startsWith("'config.name' differs"));
        body.remove("name");
        assertTrue(gate.configRefusal(post, json(body), NONE).message().startsWith("'name' is missing"));
        body.put("name", 42);
        assertTrue(gate.configRefusal(post, json(body), NONE).message().startsWith("'name' has characters outside"));
        // Jackson keeps the last of two equal keys, so would Kafka: a repeated key is refused instead.
        byte[] twice = "{\"name\": \"ok\", \"name\": \"${env:X}\", \"config\": {}}".getBytes(StandardCharsets.UTF_8);
        assertTrue(gate.configRefusal(post, twice, NONE).message().startsWith("the request body is not a JSON object (or repeats a key)"));
    }

    @Test
    void aConfigNameThatDiffersFromThePathIsRefused() throws Exception {
        Map<String, String> c = new HashMap<>(PinnedClustersTest.rendered());
        assertNull(gate.configRefusal(config("PUT", "mm2-source"), json(c), NONE));
        c.put("name", "mm2-source");
        assertNull(gate.configRefusal(config("PUT", "mm2-source"), json(c), NONE));
        c.put("name", VARIABLE);
        Refusal r = gate.configRefusal(config("PUT", "mm2-source"), json(c), NONE);
        assertEquals("'name' differs from the connector name mm2-source in the path: leave it out or make it equal", r.message());
        assertFalse(r.message().contains("MM2_SOURCE"), "a refusal never quotes the value");
        // validation has no path name: the config's own name is checked
        Request validate = at("PUT", "/connector-plugins/{pluginName}/config/validate", "pluginName", "MirrorSourceConnector");
        assertTrue(gate.configRefusal(validate, json(c), NONE).message().startsWith("'name' has characters outside"));
        c.put("name", "probe");
        assertNull(gate.configRefusal(validate, json(c), NONE));
    }

    @Test
    void aPatchIsCheckedOnTheConfigTheWorkerWouldHoldAfterTheMerge() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        CurrentConfigs herder = name -> {
            asked.incrementAndGet();
            return name.equals("mm2-source") ? stored(name) : null;
        };
        // Alone each key is a pinned setting; merged, the producer would point at the source with the worker's login.
        Map<String, Object> patch = new LinkedHashMap<>();
        patch.put("producer.override.bootstrap.servers", "src:9094");
        Refusal r = gate.configRefusal(config("PATCH", "mm2-source"), json(patch), herder);
        assertEquals(400, r.status());
        assertTrue(r.message().startsWith("'producer.override.sasl.jaas.config' is missing"), r.message());
        assertEquals(1, asked.get());
        // A null removes a key: removing the mechanism under MM2's prefix is allowed (Kafka's default, toward the pin),
        patch.clear();
        patch.put("source.cluster.sasl.mechanism", null);
        assertNull(gate.configRefusal(config("PATCH", "mm2-source"), json(patch), herder));
        // ...removing the bootstrap leaves the other source.cluster settings naming no cluster.
        patch.put("source.cluster.bootstrap.servers", null);
        assertTrue(gate.configRefusal(config("PATCH", "mm2-source"), json(patch), herder).message()
                .startsWith("'source.cluster.bootstrap.servers' is missing"));
        // The patched values are checked in the merge too, and the name may not change or go.
        patch.clear();
        patch.put("topics", VARIABLE);
        assertTrue(gate.configRefusal(config("PATCH", "mm2-source"), json(patch), herder).message()
                .startsWith("'topics' names a config provider variable"));
        for (Object name : new Object[] {"other", null}) {
            patch.clear();
            patch.put("name", name);
            assertTrue(gate.configRefusal(config("PATCH", "mm2-source"), json(patch), herder).message()
                    .startsWith("'name' after the PATCH would differ from the connector name mm2-source"), String.valueOf(name));
        }
        patch.clear();
        patch.put("tasks.max", "4");
        assertNull(gate.configRefusal(config("PATCH", "mm2-source"), json(patch), herder));
        assertEquals(404, gate.configRefusal(config("PATCH", "missing"), json(patch), herder).status());
        Refusal unknown = gate.configRefusal(config("PATCH", "mm2-source"), json(patch), name -> {
            throw new IllegalStateException("rebalance in progress");
        });
        assertEquals(409, unknown.status());
        assertTrue(unknown.message().contains("retry, or PUT the whole config"), unknown.message());
    }

    @Test
    void theMergeIsKafkasPatchConfig() {
        Map<String, String> current = Map.of("a", "1", "b", "2");
        Map<String, String> patch = new HashMap<>();
        patch.put("a", null);
        patch.put("c", "3");
        assertEquals(Map.of("b", "2", "c", "3"), ConnectorConfigGate.merged(current, patch));
    }

    @Test
    void everyEndpointThatCarriesAConfigIsRead() throws Exception {
        byte[] bad = json(Map.of("source.cluster.bootstrap.servers", VARIABLE + ".invalid:9092"));
        CurrentConfigs herder = this::stored;
        assertNotNull(gate.configRefusal(config("PUT", "probe"), bad, NONE));
        assertNotNull(gate.configRefusal(config("PATCH", "probe"), bad, herder));
        Request validate = at("PUT", "/connector-plugins/{pluginName}/config/validate", "pluginName", "MirrorSourceConnector");
        assertNotNull(gate.configRefusal(validate, bad, NONE));
        assertTrue(gate.configRefusal(config("PUT", "p"), "not json".getBytes(StandardCharsets.UTF_8), NONE).message()
                .startsWith("the request body is not a JSON object"));
        assertTrue(gate.configRefusal(config("PUT", "p"), "[1]".getBytes(StandardCharsets.UTF_8), NONE).message()
                .startsWith("the request body is not a JSON object"));
        assertTrue(gate.configRefusal(at("POST", "/connectors/"), json(Map.of("name", "p")), NONE).message()
                .startsWith("the request body carries no connector config object"));
        // non-string JSON values are checked as text too
        assertNull(gate.configRefusal(config("PUT", "p"), "{\"tasks.max\": 2}".getBytes(StandardCharsets.UTF_8), NONE));
        assertTrue(ConnectorConfigGate.carriesConfig(at("post", "/connectors/")));
        assertFalse(ConnectorConfigGate.carriesConfig(config("GET", "p")));
        assertFalse(ConnectorConfigGate.carriesConfig(at("PUT", "/connectors/{connector}/pause", "connector", "p")));
        assertNull(gate.configRefusal(at("PUT", "/connectors/{connector}/pause", "connector", "p"), bad, NONE));
    }

    @Test
    void aTemplateIsNormalisedToItsSegments() {
        assertEquals("/connectors/{connector}/config", ConnectorConfigGate.route("/connectors//{connector}/config/"));
        assertEquals("/connectors/{connector}/config", ConnectorConfigGate.route("connectors/{connector: [^/]+}/config"));
        assertEquals("/", ConnectorConfigGate.route(null));
    }

    @Test
    void noLoggerChangeReachesTheAuditLogger() {
        for (String logger : List.of(ConnectorConfigGate.AUDIT_LOGGER, "io.mskmigrate.connect.pinning", "io.mskmigrate",
                "io.msk", "io", "root", "ROOT")) {
            Refusal r = gate.routeRefusal(at("PUT", "/admin/loggers/{logger}", "logger", logger));
            assertNotNull(r, logger);
            assertEquals(403, r.status());
            assertTrue(r.message().contains("covers the REST audit logger io.mskmigrate.connect.pinning.audit"), r.message());
        }
        assertNull(gate.routeRefusal(at("PUT", "/admin/loggers/{logger}", "logger", "org.apache.kafka.connect.mirror")));
        assertNull(gate.routeRefusal(at("PUT", "/admin/loggers/{logger}", "logger", "io.mskmigrate.connect.autorestart")));
        assertNull(gate.routeRefusal(at("GET", "/admin/loggers/{logger}", "logger", "root")));
    }

    @Test
    void aLoggedPathCarriesNoVariableAndNoLineBreak() {
        assertEquals("connectors/%24%7Benv%3AX%7D/config%0A", ConnectorConfigGate.printable("connectors/${env:X}/config\n"));
        assertEquals("connectors/%24%7Benv%3AX%7D", ConnectorConfigGate.printable("connectors/%24%7Benv%3AX%7D"));
    }
}
