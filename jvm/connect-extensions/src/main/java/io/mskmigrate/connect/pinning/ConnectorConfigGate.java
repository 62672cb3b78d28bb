package io.mskmigrate.connect.pinning;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What the REST filter refuses before a resource method (and so the herder) sees a request, decided on the route
 * the REST server matched: its JAX-RS template and decoded path parameters, never a re-parse of the URI.
 *
 * <p>Invariants of a request this gate lets through:
 * <ul>
 *   <li>every connector name it carries (the {@code {connector}} path parameter of any route, a POST body's
 *       {@code name}, a config's {@code name}) matches {@link #CONNECTOR_NAME}, so Kafka's copying of the name
 *       into the config can never put a config provider variable there, and a config's {@code name} is the
 *       connector's own;</li>
 *   <li>a config it carries ({@code POST /connectors}, {@code PUT /connectors/NAME/config},
 *       {@code PUT /connector-plugins/P/config/validate}) passes {@link PinnedClusters#refusal}; for
 *       {@code PATCH /connectors/NAME/config}, the config the worker would hold after the merge does (the current
 *       config, each patched key set, a null removing it: Kafka's ConnectUtils.patchConfig);</li>
 *   <li>a logger level change ({@code PUT /admin/loggers/NAME}) never reaches the audit logger
 *       {@value #AUDIT_LOGGER}: Connect applies a level to every logger whose name starts with NAME, and to all
 *       of them for {@code root}.</li>
 * </ul>
 * A body it cannot read is refused (fail closed). Other requests pass untouched.
 *
 * <p>Residual (docs/design.md): the PATCH merge is checked against the config read just before; two racing
 * writes, each checked, can at worst mix two pinned clusters' settings under one prefix.
 */
public final class ConnectorConfigGate {
    /** Letters, digits, '.', '_', '-': no '$', '{', ':', '%', '/', space or control character. */
    public static final Pattern CONNECTOR_NAME = Pattern.compile("[A-Za-z0-9._-]+");
    public static final String AUDIT_LOGGER = "io.mskmigrate.connect.pinning.audit";

    /** The path parameter Kafka's ConnectorsResource names the connector with, on every /connectors/{..} route. */
    static final String CONNECTOR_PARAM = "connector";
    static final String LOGGER_PARAM = "logger";

    /** Routes by their matched template ({@link #route}): Kafka's ConnectorsResource, ConnectorPluginsResource,
     *  LoggingResource. */
    static final String CREATE = "/connectors";
    static final String CONFIG = "/connectors/{connector}/config";
    static final String VALIDATE = "/connector-plugins/{pluginName}/config/validate";
    static final String LOGGER = "/admin/loggers/{logger}";

    private static final String NAME_RULE = "use only letters, digits, '.', '_' and '-'";
    private static final ObjectMapper JSON = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    /** A request as the REST server matched it: method, route template, decoded path parameters. */
    public record Request(String method, String route, Map<String, List<String>> pathParameters) {
        public Request {
            method = method == null ? "" : method.toUpperCase(Locale.ROOT);
            route = ConnectorConfigGate.route(route);
            pathParameters = pathParameters == null ? Map.of() : pathParameters;
        }
    }

    /** The answer sent instead of calling the resource: HTTP status and one line naming the field and the fix. */
    public record Refusal(int status, String message) {
        static Refusal badRequest(String message) {
            return new Refusal(400, message);
        }
    }

    /** A connector's current config as the herder holds it (unresolved), for checking a PATCH's result. */
    @FunctionalInterface
    public interface CurrentConfigs {
        /** Null when the herder has no such connector; throws when it cannot tell. */
        Map<String, String> of(String connector) throws Exception;
    }

    private final PinnedClusters pinned;

    public ConnectorConfigGate(PinnedClusters pinned) {
        this.pinned = pinned;
    }

    /** A template as matched segments joined by '/', with '{name:regex}' written '{name}' and no empty segment. */
    static String route(String template) {
        StringBuilder out = new StringBuilder();
        StringBuilder segment = new StringBuilder();
        int depth = 0;
        for (char c : (template == null ? "" : template + "/").toCharArray()) {
            depth += c == '{' ? 1 : c == '}' ? -1 : 0;
            if (c != '/' || depth > 0) {
                segment.append(c);
                continue;
            }
            String s = segment.toString();
            int colon = s.indexOf(':');
            if (s.startsWith("{") && s.endsWith("}") && colon > 0) {
                s = s.substring(0, colon).trim() + "}";
            }
            if (!s.isEmpty()) {
                out.append('/').append(s);
            }
            segment.setLength(0);
        }
        return out.length() == 0 ? "/" : out.toString();
    }

    /** True when the request carries a connector config (its body must then pass {@link #configRefusal}). */
    public static boolean carriesConfig(Request r) {
        return (r.method().equals("POST") && r.route().equals(CREATE))
                || ((r.method().equals("PUT") || r.method().equals("PATCH")) && r.route().equals(CONFIG))
                || (r.method().equals("PUT") && r.route().equals(VALIDATE));
    }

    /** What the route alone refuses, whatever the method: a connector name outside {@link #CONNECTOR_NAME} in the
     *  path, a level change that would reach the audit logger. Null when the route is fine. */
    public Refusal routeRefusal(Request r) {
        List<String> names = r.pathParameters().get(CONNECTOR_PARAM);
        if (r.route().startsWith("/connectors/{") && (names == null || names.isEmpty())) {
            return new Refusal(500, "the connector route " + r.route() + " names no '" + CONNECTOR_PARAM
                    + "' path parameter this worker can check: the request was not run");
        }
        for (String name : names == null ? List.<String>of() : names) {
            if (!validName(name)) {
                return Refusal.badRequest("the connector name in the path has characters outside [A-Za-z0-9._-]: "
                        + NAME_RULE + " (percent-encoded or not)");
            }
        }
        if (r.route().equals(LOGGER) && !r.method().equals("GET") && !r.method().equals("HEAD")) {
            for (String logger : r.pathParameters().getOrDefault(LOGGER_PARAM, List.of())) {
                if (reachesAuditLogger(logger)) {
                    return new Refusal(403, "the logger '" + (validName(logger) ? logger : "?") + "' covers the REST audit "
                            + "logger " + AUDIT_LOGGER + ", whose level this worker pins: change a narrower logger");
                }
            }
        }
        return null;
    }

    /** Connect sets a level on every logger whose name starts with the one given, and on every logger for root. */
    static boolean reachesAuditLogger(String logger) {
        return logger == null || logger.isEmpty() || logger.equalsIgnoreCase("root") || AUDIT_LOGGER.startsWith(logger);
    }

    static boolean validName(String name) {
        return name != null && CONNECTOR_NAME.matcher(name).matches();
    }

    /** The first reason the config this request carries is refused, or null when it is accepted. */
    public Refusal configRefusal(Request r, byte[] body, CurrentConfigs current) {
        if (!carriesConfig(r)) {
            return null;
        }
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (IOException e) {
            return Refusal.badRequest("the request body is not a JSON object (or repeats a key): send the connector config as JSON");
        }
        if (root == null || !root.isObject()) {
            return Refusal.badRequest("the request body is not a JSON object: send the connector config as JSON");
        }
        if (r.route().equals(CREATE)) {
            return createRefusal(root);
        }
        Map<String, String> config = flat(root);
        if (r.route().equals(VALIDATE)) {
            if (config.containsKey("name") && !validName(config.get("name"))) {
                return Refusal.badRequest("'name' has characters outside [A-Za-z0-9._-]: " + NAME_RULE);
            }
            return pinnedRefusal(config);
        }
        String path = r.pathParameters().get(CONNECTOR_PARAM).get(0);
        if (r.method().equals("PATCH")) {
            Map<String, String> now;
            try {
                now = current.of(path);
            } catch (Exception e) {
                return new Refusal(409, "cannot read connector " + path + "'s current config to check the PATCH result: "
                        + "retry, or PUT the whole config");
            }
            if (now == null) {
                return new Refusal(404, "connector " + path + " not found");
            }
            config = merged(now, config);
            if (!path.equals(config.get("name"))) {
                return Refusal.badRequest("'name' after the PATCH would differ from the connector name " + path
                        + " in the path: leave 'name' out of the patch");
            }
        } else if (config.containsKey("name") && !path.equals(config.get("name"))) {
            return Refusal.badRequest("'name' differs from the connector name " + path + " in the path: leave it out or make it equal");
        }
        return pinnedRefusal(config);
    }

    private Refusal createRefusal(JsonNode root) {
        JsonNode name = root.get("name");
        if (name == null || name.isNull()) {
            return Refusal.badRequest("'name' is missing: POST /connectors takes {\"name\": ..., \"config\": {...}}");
        }
        if (!name.isTextual() || !validName(name.asText())) {
            return Refusal.badRequest("'name' has characters outside [A-Za-z0-9._-]: " + NAME_RULE);
        }
        JsonNode config = root.get("config");
        if (config == null || !config.isObject()) {
            return Refusal.badRequest("the request body carries no connector config object: send {\"name\": ..., \"config\": {...}}");
        }
        Map<String, String> flat = flat(config);
        if (flat.containsKey("name") && !name.asText().equals(flat.get("name"))) {
            return Refusal.badRequest("'config.name' differs from the body's 'name' " + name.asText() + ": leave it out or make it equal");
        }
        return pinnedRefusal(flat);
    }

    private Refusal pinnedRefusal(Map<String, String> config) {
        String refusal = pinned.refusal(config);
        return refusal == null ? null : Refusal.badRequest(refusal);
    }

    /** Kafka's ConnectUtils.patchConfig: each patched key set, a null value removing it. */
    static Map<String, String> merged(Map<String, String> current, Map<String, String> patch) {
        Map<String, String> out = new LinkedHashMap<>(current);
        patch.forEach((k, v) -> {
            if (v == null) {
                out.remove(k);
            } else {
                out.put(k, v);
            }
        });
        return out;
    }

    /** The body's keys with their values as text (Kafka reads them as Map&lt;String, String&gt;); JSON null stays null. */
    private static Map<String, String> flat(JsonNode config) {
        Map<String, String> flat = new LinkedHashMap<>();
        config.fields().forEachRemaining(e -> flat.put(e.getKey(),
                e.getValue().isNull() ? null : e.getValue().isTextual() ? e.getValue().asText() : e.getValue().toString()));
        return flat;
    }

    /** ``path`` for a log line: every character outside [A-Za-z0-9._~/%-] percent-encoded (no log injection, and a
     *  variable reference is never written as one). */
    public static String printable(String path) {
        StringBuilder out = new StringBuilder();
        for (byte b : (path == null ? "" : path).getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || "._~/%-".indexOf(c) >= 0) {
                out.append(c);
            } else {
                out.append('%').append(String.format("%02X", b & 0xff));
            }
        }
        return out.toString();
    }
}
