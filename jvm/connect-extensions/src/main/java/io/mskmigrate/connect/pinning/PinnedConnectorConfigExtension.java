package io.mskmigrate.connect.pinning;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import io.mskmigrate.connect.pinning.ConnectorConfigGate.Refusal;
import org.apache.kafka.connect.errors.NotFoundException;
import org.apache.kafka.connect.health.ConnectClusterState;
import org.apache.kafka.connect.rest.ConnectRestExtension;
import org.apache.kafka.connect.rest.ConnectRestExtensionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refuses, before the herder sees it, every connector config that points a client elsewhere than the
 * environment's pinned clusters or names a config provider variable outside them ({@link PinnedClusters}), every
 * connector name outside [A-Za-z0-9._-] on any route, a PATCH whose merged result would be refused, and a logger
 * change that would reach the audit logger ({@link ConnectorConfigGate}); and writes one audit line per changing
 * REST request naming the person who sent it.
 *
 * <p>The route is the one Jersey matched (its templates, through {@code ExtendedUriInfo}, and the decoded path
 * parameters the resource method receives): an encoded name is checked as the resource will see it, and no
 * re-parse of the URI can disagree with the match. A PATCH's current config comes from the herder
 * ({@link ConnectClusterState#connectorConfig}).
 *
 * <p>Why a REST filter and not the client-override policy or a config provider: the override policy only sees
 * {@code producer|consumer|admin.override.*} (MM2 builds its own clients from {@code source.cluster.*}); a config
 * provider sees a variable's name but not which connector key asked for it, and Connect resolves variables
 * both at validation and at task start, so refusing there is too late for the log and the DNS lookup. The
 * filter runs after authentication (priority 2000, Priorities.AUTHORIZATION; Kafka's basic-auth filter runs at
 * 1000) and before the resource method, i.e. before validation resolves anything. Connector configs reach the
 * herder only through these REST endpoints (or a write to the worker's config topic, which needs the
 * worker's own Kafka identity); workers forward such requests to the leader through REST, and each applies
 * this filter.
 *
 * <p>The filter is a dynamic proxy because the JAX-RS API is {@code javax.ws.rs} in Kafka 3.x and
 * {@code jakarta.ws.rs} in 4.x: the same jar serves both runtimes.
 *
 * <p>Audit line (logger {@code io.mskmigrate.connect.pinning.audit}, INFO):
 * {@code REST audit: user=<name> <METHOD> /<path> -> forwarded|refused: <one line>}. The path is the raw one with
 * every character outside [A-Za-z0-9._~/%-] percent-encoded; values are never logged.
 */
public class PinnedConnectorConfigExtension implements ConnectRestExtension {
    public static final String AUDIT_LOGGER = ConnectorConfigGate.AUDIT_LOGGER;
    /** Jersey's UriInfo (Kafka's REST server is Jersey 2 in 3.x, 3 in 4.x; same package): the matched templates. */
    static final String EXTENDED_URI_INFO = "org.glassfish.jersey.server.ExtendedUriInfo";
    static final String URI_TEMPLATE = "org.glassfish.jersey.uri.UriTemplate";
    /** Jakarta/javax Priorities.AUTHORIZATION: after authentication. */
    static final int PRIORITY = 2000;

    private static final Logger log = LoggerFactory.getLogger(PinnedConnectorConfigExtension.class);
    private static final Logger audit = LoggerFactory.getLogger(AUDIT_LOGGER);

    private ConnectorConfigGate gate = new ConnectorConfigGate(new PinnedClusters(Map.of()));
    private volatile ConnectClusterState clusterState;

    @Override
    public void configure(Map<String, ?> configs) {
        PinnedClusters pinned = PinnedClusters.fromWorkerConfig(configs);
        gate = new ConnectorConfigGate(pinned);
        log.info("connector configs pinned to the clusters {} ({})", pinned.aliases(), PinnedClusters.CLUSTERS_CONFIG);
    }

    ConnectorConfigGate gate() {
        return gate;
    }

    @Override
    public void register(ConnectRestExtensionContext context) {
        clusterState = context.clusterState();
        // configurable() is called reflectively too: its return type (javax or jakarta Configurable) is part of
        // the method's descriptor, so a direct call binds the jar to one Kafka major version.
        Object configurable;
        try {
            configurable = ConnectRestExtensionContext.class.getMethod("configurable").invoke(context);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reach the REST configurable of this Connect runtime", e);
        }
        ClassLoader loader = configurable.getClass().getClassLoader();
        String pkg = apiPackage(configurable.getClass());
        try {
            Class<?> filterType = Class.forName(pkg + ".container.ContainerRequestFilter", false, loader);
            // The route is decided on Jersey's matched templates: without them the filter could not tell a
            // config route from another, so the worker does not start.
            Class.forName(EXTENDED_URI_INFO, false, loader);
            Class.forName(URI_TEMPLATE, false, loader);
            Object filter = Proxy.newProxyInstance(filterType.getClassLoader(), new Class<?>[] {filterType},
                    new FilterHandler(pkg, filterType.getClassLoader()));
            Method register = Class.forName(pkg + ".core.Configurable", false, loader)
                    .getMethod("register", Object.class, int.class);
            register.invoke(configurable, filter, PRIORITY);
        } catch (ReflectiveOperationException e) {
            // Fail closed: a worker that cannot check connector configs must not start serving them.
            throw new IllegalStateException("cannot register the connector-config filter (" + pkg + ")", e);
        }
    }

    /** "jakarta.ws.rs" or "javax.ws.rs": the API the runtime's Configurable implements (not merely one on the classpath). */
    static String apiPackage(Class<?> configurableType) {
        for (Class<?> c = configurableType; c != null; c = c.getSuperclass()) {
            for (Class<?> i : c.getInterfaces()) {
                if (i.getName().endsWith(".ws.rs.core.Configurable")) {
                    return i.getName().substring(0, i.getName().length() - ".core.Configurable".length());
                }
            }
        }
        throw new IllegalStateException(configurableType.getName() + " implements no jakarta/javax.ws.rs Configurable");
    }

    /** The authenticated user: the security context's principal, else the Basic header's user name (the
     *  basic-auth filter has verified it, or the request would have been answered 401). */
    static String user(Principal principal, String authorization) {
        if (principal != null && principal.getName() != null) {
            return principal.getName();
        }
        if (authorization != null && authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
            try {
                String decoded = new String(Base64.getDecoder().decode(authorization.substring(6).trim()), StandardCharsets.UTF_8);
                int colon = decoded.indexOf(':');
                return colon < 0 ? decoded : decoded.substring(0, colon);
            } catch (IllegalArgumentException e) {
                return "-";
            }
        }
        return "-";
    }

    /** Connect's error body, {"error_code": STATUS, "message": ...}. */
    static String errorBody(int status, String message) {
        return "{\"error_code\":" + status + ",\"message\":\"" + message.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
    }

    private final class FilterHandler implements InvocationHandler {
        private final String pkg;
        private final ClassLoader loader;

        FilterHandler(String pkg, ClassLoader loader) {
            this.pkg = pkg;
            this.loader = loader;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            switch (method.getName()) {
                case "filter":
                    filter(args[0]);
                    return null;
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                case "toString":
                    return "PinnedConnectorConfigFilter";
                default:
                    return null;
            }
        }

        private void filter(Object ctx) throws Exception {
            // Methods are looked up on the JAX-RS interfaces (and Jersey's ExtendedUriInfo), never on implementation classes.
            String httpMethod = (String) call("container.ContainerRequestContext", ctx, "getMethod");
            Object uriInfo = call("container.ContainerRequestContext", ctx, "getUriInfo");
            String raw = (String) api("core.UriInfo").getMethod("getPath", boolean.class).invoke(uriInfo, false);
            String path = "/" + ConnectorConfigGate.printable(raw == null ? "" : raw.replaceFirst("^/+", ""));
            ConnectorConfigGate.Request request = matched(httpMethod, uriInfo);
            Refusal refusal = gate.routeRefusal(request);
            boolean reading = "GET".equals(request.method()) || "HEAD".equals(request.method()) || "OPTIONS".equals(request.method());
            if (refusal == null && reading) {
                return;
            }
            Class<?> context = api("container.ContainerRequestContext");
            Object security = call("container.ContainerRequestContext", ctx, "getSecurityContext");
            Principal principal = security == null ? null : (Principal) call("core.SecurityContext", security, "getUserPrincipal");
            String user = user(principal, (String) context.getMethod("getHeaderString", String.class).invoke(ctx, "Authorization"));
            if (refusal == null && !ConnectorConfigGate.carriesConfig(request)) {
                audit.info("REST audit: user={} {} {} -> forwarded", user, httpMethod, path);
                return;
            }
            if (refusal == null) {
                byte[] body;
                try (InputStream in = (InputStream) call("container.ContainerRequestContext", ctx, "getEntityStream")) {
                    body = in.readAllBytes();
                }
                refusal = gate.configRefusal(request, body, this::currentConfig);
                if (refusal == null) {
                    context.getMethod("setEntityStream", InputStream.class).invoke(ctx, new ByteArrayInputStream(body));
                    audit.info("REST audit: user={} {} {} -> forwarded (connector config within the pinned clusters)",
                            user, httpMethod, path);
                    return;
                }
            }
            audit.warn("REST audit: user={} {} {} -> refused: {}", user, httpMethod, path, refusal.message());
            Class<?> response = api("core.Response");
            Class<?> builderType = api("core.Response$ResponseBuilder");
            Object builder = response.getMethod("status", int.class).invoke(null, refusal.status());
            builder = builderType.getMethod("entity", Object.class).invoke(builder, errorBody(refusal.status(), refusal.message()));
            builder = builderType.getMethod("type", String.class).invoke(builder, "application/json");
            Object built = builderType.getMethod("build").invoke(builder);
            context.getMethod("abortWith", response).invoke(ctx, built);
        }

        /** The route the REST server matched: Jersey's matched templates (innermost first, so reversed and
         *  joined) and the decoded path parameters the resource method will receive. */
        private ConnectorConfigGate.Request matched(String httpMethod, Object uriInfo) throws Exception {
            Class<?> extended = Class.forName(EXTENDED_URI_INFO, true, uriInfo.getClass().getClassLoader());
            List<?> templates = (List<?>) extended.getMethod("getMatchedTemplates").invoke(uriInfo);
            Method getTemplate = Class.forName(URI_TEMPLATE, true, uriInfo.getClass().getClassLoader()).getMethod("getTemplate");
            StringBuilder route = new StringBuilder();
            for (int i = templates.size() - 1; i >= 0; i--) {
                route.append('/').append((String) getTemplate.invoke(templates.get(i)));
            }
            Map<?, ?> raw = (Map<?, ?>) call("core.UriInfo", uriInfo, "getPathParameters");
            Map<String, List<String>> params = new LinkedHashMap<>();
            raw.forEach((k, v) -> {
                List<String> values = new ArrayList<>();
                ((List<?>) v).forEach(x -> values.add(String.valueOf(x)));
                params.put(String.valueOf(k), values);
            });
            return new ConnectorConfigGate.Request(httpMethod, route.toString(), params);
        }

        private Map<String, String> currentConfig(String connector) {
            try {
                return clusterState.connectorConfig(connector);
            } catch (RuntimeException e) {
                for (Throwable t = e; t != null; t = t.getCause()) {
                    if (t instanceof NotFoundException) {
                        return null;
                    }
                }
                throw e;
            }
        }

        private Class<?> api(String name) throws ClassNotFoundException {
            return Class.forName(pkg + "." + name, true, loader);
        }

        private Object call(String type, Object target, String name) throws Exception {
            return api(type).getMethod(name).invoke(target);
        }
    }

    @Override
    public String version() {
        return org.apache.kafka.common.utils.AppInfoParser.getVersion();
    }

    @Override
    public void close() {
    }
}
