package io.mskmigrate.connect.autorestart;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.connect.health.ConnectClusterState;
import org.apache.kafka.connect.health.ConnectorHealth;
import org.apache.kafka.connect.health.TaskState;
import org.apache.kafka.connect.rest.ConnectRestExtension;
import org.apache.kafka.connect.rest.ConnectRestExtensionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Restarts FAILED connectors and tasks of this Connect cluster, with exponential back-off and a cap.
 *
 * <p>Loaded by the worker as a REST extension ({@code rest.extension.classes}). Every
 * {@code check.interval.ms} it reads the cluster's connector health ({@link ConnectClusterState}); the
 * worker that runs a connector's instance is the one responsible for it (exactly one per connector, and
 * the duty moves with the connector when a worker dies). When a task or the connector is FAILED and its
 * back-off has passed, it sends Kafka Connect's own restart request,
 * {@code POST /connectors/NAME/restart?includeTasks=true&onlyFailed=true}, to this worker's REST listener
 * (forwarded to the leader by Connect), with HTTP basic credentials when configured
 * ({@code rest.user}/{@code rest.password}, usually {@code ${env:...}} references resolved by the worker's
 * config providers). After {@code max.restarts} attempts a unit is left FAILED for an operator.
 *
 * <p>Worker properties (prefix {@value #PREFIX}): enabled, check.interval.ms, initial.backoff.ms,
 * backoff.multiplier, max.backoff.ms, max.restarts, stable.ms, rest.url, rest.user, rest.password.
 * Metrics: MBean {@code io.mskmigrate.connect:type=auto-restart,connector=NAME} ({@link AutoRestartMetricsMBean}).
 */
public class AutoRestartExtension implements ConnectRestExtension {
    public static final String PREFIX = "msk.migrate.auto.restart.";
    public static final String MBEAN_DOMAIN = "io.mskmigrate.connect";

    private static final Logger log = LoggerFactory.getLogger(AutoRestartExtension.class);

    private final Map<String, AutoRestartMetrics> metrics = new HashMap<>();
    private Map<String, String> config = new HashMap<>();
    private RestartPolicy policy;
    private long checkIntervalMs;
    private boolean enabled;
    private String restUrl;
    private String authHeader;
    private String workerId;
    private ConnectClusterState cluster;
    private ScheduledExecutorService scheduler;
    private HttpClient http;

    String get(String key, String dflt) {
        String v = config.get(PREFIX + key);
        return v == null || v.isBlank() ? dflt : v.trim();
    }

    @Override
    public void configure(Map<String, ?> configs) {
        config = new HashMap<>();
        configs.forEach((k, v) -> config.put(k, v == null ? null : String.valueOf(v)));
        enabled = Boolean.parseBoolean(get("enabled", "true"));
        checkIntervalMs = Long.parseLong(get("check.interval.ms", "5000"));
        policy = new RestartPolicy(
                Long.parseLong(get("initial.backoff.ms", "10000")),
                Double.parseDouble(get("backoff.multiplier", "2")),
                Long.parseLong(get("max.backoff.ms", "300000")),
                Integer.parseInt(get("max.restarts", "10")),
                Long.parseLong(get("stable.ms", "600000")));
        String listener = firstListener(config.getOrDefault("listeners", "http://:8083"));
        restUrl = get("rest.url", listener);
        String host = config.get("rest.advertised.host.name");
        String port = config.get("rest.advertised.port");
        URI l = URI.create(listener);
        workerId = (host == null || host.isBlank() ? l.getHost() : host) + ":" + (port == null || port.isBlank() ? l.getPort() : port);
        String user = get("rest.user", null);
        String password = get("rest.password", null);
        String credentialsFile = get("rest.credentials.file", null);
        if (user == null && credentialsFile != null) {
            // The basic-auth extension's own credentials file (user=password lines, written by the
            // entrypoint into the worker's private config dir): no secret in worker.properties.
            Map.Entry<String, String> first = firstCredential(Path.of(credentialsFile));
            if (first != null) {
                user = first.getKey();
                password = first.getValue();
            } else {
                log.warn("auto-restart: no credentials in {}; restart calls will be unauthenticated", credentialsFile);
            }
        }
        authHeader = user == null ? null
                : "Basic " + Base64.getEncoder().encodeToString((user + ":" + (password == null ? "" : password)).getBytes(StandardCharsets.UTF_8));
    }

    /** The first {@code user=password} entry of a PropertyFileLoginModule credentials file, or null. */
    static Map.Entry<String, String> firstCredential(Path file) {
        try (var reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            Properties props = new Properties();
            props.load(reader);
            return props.stringPropertyNames().stream().sorted().findFirst()
                    .map(u -> Map.entry(u, props.getProperty(u))).orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    /** The worker's first REST listener as a URL this JVM can call (wildcard host becomes 127.0.0.1). */
    static String firstListener(String listeners) {
        String first = listeners.split(",")[0].trim();
        URI u = URI.create(first.replace("://:", "://0.0.0.0:"));
        String host = u.getHost() == null || u.getHost().equals("0.0.0.0") || u.getHost().equals("::") ? "127.0.0.1" : u.getHost();
        return u.getScheme() + "://" + host + ":" + u.getPort();
    }

    @Override
    public void register(ConnectRestExtensionContext restPluginContext) {
        cluster = restPluginContext.clusterState();
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        if (!enabled) {
            log.info("auto-restart disabled ({}enabled=false)", PREFIX);
            return;
        }
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "msk-migrate-auto-restart");
            t.setDaemon(true);
            return t;
        });
        scheduler.scheduleWithFixedDelay(this::checkSafely, checkIntervalMs, checkIntervalMs, TimeUnit.MILLISECONDS);
        log.info("auto-restart of failed MM2 tasks on worker {}: every {} ms via {} (basic auth: {})",
                workerId, checkIntervalMs, restUrl, authHeader != null);
    }

    private void checkSafely() {
        try {
            check(System.currentTimeMillis());
        } catch (Throwable t) { // the herder may be rebalancing; try again next round
            log.debug("auto-restart check skipped: {}", t.toString());
        }
    }

    /** One round: decide per failed unit, then send at most one restart request per connector. */
    void check(long now) {
        Set<String> present = new HashSet<>();
        for (String name : cluster.connectors()) {
            ConnectorHealth health = cluster.connectorHealth(name);
            AutoRestartMetrics m = metricsFor(name);
            boolean owner = workerId.equals(health.connectorState().workerId());
            Map<String, String> states = new HashMap<>();
            states.put(name + "/connector", health.connectorState().state());
            for (Map.Entry<Integer, TaskState> e : health.tasksState().entrySet()) {
                states.put(name + "/task-" + e.getKey(), e.getValue().state());
            }
            present.addAll(states.keySet());
            int failed = 0;
            boolean restart = false;
            for (Map.Entry<String, String> e : states.entrySet()) {
                if ("FAILED".equals(e.getValue())) {
                    failed++;
                    if (!owner) {
                        continue;
                    }
                    RestartPolicy.Decision d = policy.onFailed(e.getKey(), now);
                    if (d == RestartPolicy.Decision.RESTART) {
                        restart = true;
                        log.info("auto-restart: {} FAILED, restart attempt {}", e.getKey(), policy.attempts(e.getKey()));
                    } else if (d == RestartPolicy.Decision.GIVE_UP) {
                        log.error("auto-restart: {} still FAILED after {} restarts; leaving it for an operator "
                                + "(msk-migrate connectors status / restart)", e.getKey(), policy.attempts(e.getKey()));
                    }
                } else if ("RUNNING".equals(e.getValue()) && owner) {
                    policy.onRunning(e.getKey(), now);
                }
            }
            m.failed.set(failed);
            m.exhausted.set(owner ? policy.exhausted(name + "/") : 0);
            if (restart && requestRestart(name)) {
                m.restarts.incrementAndGet();
            }
        }
        policy.retain(present);
    }

    boolean requestRestart(String connector) {
        String url = restUrl + "/connectors/" + URLEncoder.encode(connector, StandardCharsets.UTF_8).replace("+", "%20")
                + "/restart?includeTasks=true&onlyFailed=true";
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.noBody());
        if (authHeader != null) {
            req.header("Authorization", authHeader);
        }
        try {
            HttpResponse<String> resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
            if (resp.statusCode() >= 300) {
                log.warn("auto-restart: restart of {} answered {}: {}", connector, resp.statusCode(), resp.body());
                return false;
            }
            return true;
        } catch (Exception e) {
            log.warn("auto-restart: restart of {} failed: {}", connector, e.toString());
            return false;
        }
    }

    private synchronized AutoRestartMetrics metricsFor(String connector) {
        return metrics.computeIfAbsent(connector, c -> {
            AutoRestartMetrics m = new AutoRestartMetrics();
            try {
                MBeanServer server = ManagementFactory.getPlatformMBeanServer();
                ObjectName on = objectName(c);
                if (!server.isRegistered(on)) {
                    server.registerMBean(m, on);
                }
            } catch (Exception e) {
                log.warn("auto-restart: cannot register MBean for {}: {}", c, e.toString());
            }
            return m;
        });
    }

    static ObjectName objectName(String connector) throws javax.management.MalformedObjectNameException {
        String value = connector.matches("[A-Za-z0-9._-]+") ? connector : ObjectName.quote(connector);
        return new ObjectName(MBEAN_DOMAIN + ":type=auto-restart,connector=" + value);
    }

    String workerId() {
        return workerId;
    }

    String restUrl() {
        return restUrl;
    }

    @Override
    public synchronized void close() {
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        for (String c : metrics.keySet()) {
            try {
                server.unregisterMBean(objectName(c));
            } catch (Exception ignored) {
                // already gone
            }
        }
        metrics.clear();
    }

    @Override
    public String version() {
        return "0.1.0";
    }
}
