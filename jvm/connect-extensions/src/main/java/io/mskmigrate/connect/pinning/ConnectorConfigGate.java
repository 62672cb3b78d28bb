package io.mskmigrate.connect.pinning;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Which REST requests carry a connector config, and whether this worker accepts it ({@link PinnedClusters}).
 *
 * <p>Every way a config reaches the herder through REST: {@code POST /connectors} (body {@code {name, config}}),
 * {@code PUT|PATCH /connectors/NAME/config} and {@code PUT /connector-plugins/PLUGIN/config/validate} (body: the
 * config). Validation counts: the herder resolves config providers while validating. A body that is not the
 * JSON object these endpoints take is refused here too (fail closed: the gate never lets through what it
 * could not read). Other requests pass untouched.
 */
public final class ConnectorConfigGate {
    private static final Pattern CONFIG_PATH = Pattern.compile("connectors/[^/]+/config");
    private static final Pattern VALIDATE_PATH = Pattern.compile("connector-plugins/[^/]+/config/validate");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final PinnedClusters pinned;

    public ConnectorConfigGate(PinnedClusters pinned) {
        this.pinned = pinned;
    }

    /** True when the request carries a connector config (its body must then pass {@link #refusal}). */
    public static boolean carriesConfig(String method, String path) {
        String p = normalize(path);
        String m = method == null ? "" : method.toUpperCase(java.util.Locale.ROOT);
        return (m.equals("POST") && p.equals("connectors"))
                || ((m.equals("PUT") || m.equals("PATCH")) && CONFIG_PATH.matcher(p).matches())
                || (m.equals("PUT") && VALIDATE_PATH.matcher(p).matches());
    }

    /** One line naming the refused key (or the body), or null when the config is accepted. */
    public String refusal(String method, String path, byte[] body) {
        if (!carriesConfig(method, path)) {
            return null;
        }
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (IOException e) {
            return "the request body is not a JSON object: send the connector config as JSON";
        }
        JsonNode config = normalize(path).equals("connectors") && root != null ? root.get("config") : root;
        if (config == null || !config.isObject()) {
            return "the request body carries no connector config object: send the connector config as JSON";
        }
        Map<String, String> flat = new LinkedHashMap<>();
        config.fields().forEachRemaining(e -> flat.put(e.getKey(),
                e.getValue().isNull() ? null : e.getValue().isTextual() ? e.getValue().asText() : e.getValue().toString()));
        return pinned.refusal(flat);
    }

    static String normalize(String path) {
        String p = path == null ? "" : path;
        while (p.startsWith("/")) {
            p = p.substring(1);
        }
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p;
    }
}
