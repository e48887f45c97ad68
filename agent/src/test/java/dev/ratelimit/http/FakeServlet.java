package dev.ratelimit.http;

import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A request and response of a real servlet API ({@code jakarta.servlet} from Jetty's jar,
 * {@code javax.servlet} from Tomcat 9's), implemented by dynamic proxies: enough to drive
 * {@link HttpRequests} through {@link ServletApi} without a container. The containers themselves
 * are tested in forked JVMs by HttpSuiteIT.
 */
final class FakeServlet {
    final String namespace;
    /** Header names are case-insensitive, as in every container. */
    final Map<String, List<String>> requestHeaders = new java.util.TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    final Map<String, Object> attributes;
    final Map<String, String> responseHeaders = new LinkedHashMap<>();
    final ByteArrayOutputStream body = new ByteArrayOutputStream();
    String method = "GET";
    String uri = "/api/x";
    String contextPath = "";
    /** What the container mapped: {@code getServletPath()} and {@code getPathInfo()}; null for a container that says nothing. */
    String servletPath;
    String pathInfo;
    /** getServletPath() throws this (a container that refuses to map an ambiguous URI can). */
    RuntimeException servletPathFailure;
    String remoteAddr = "192.0.2.10";
    String principal;
    /** The principal's getName() throws this (an application's own Principal can). */
    Error principalFailure;
    String dispatcherType = "REQUEST";
    boolean committed;
    /** The application called startAsync(). */
    boolean asyncStarted;
    /** AsyncContext.complete() was called. */
    boolean asyncCompleted;
    /** The client went away: writing the response fails. */
    boolean clientGone;
    int status = 200;
    /** How many calls the request object has answered. */
    int requestCalls;
    Object request;
    Object response;
    Object asyncContext;

    FakeServlet(String namespace) throws Exception {
        this(namespace, new HashMap<>());
    }

    /**
     * Another request object over the same request, as a filter's wrapper is: it shares the
     * attributes (a wrapper hands them to the request it wraps) and may answer other values.
     */
    FakeServlet wrapper() throws Exception {
        FakeServlet wrapper = new FakeServlet(namespace, attributes);
        wrapper.method = method;
        wrapper.uri = uri;
        wrapper.servletPath = servletPath;
        wrapper.pathInfo = pathInfo;
        wrapper.remoteAddr = remoteAddr;
        wrapper.requestHeaders.putAll(requestHeaders);
        wrapper.principal = principal;
        wrapper.dispatcherType = dispatcherType;
        return wrapper;
    }

    private FakeServlet(String namespace, Map<String, Object> attributes) throws Exception {
        this.namespace = namespace;
        this.attributes = attributes;
        ClassLoader loader = FakeServlet.class.getClassLoader();
        Class<?> requestType = Class.forName(namespace + ".http.HttpServletRequest", false, loader);
        Class<?> responseType = Class.forName(namespace + ".http.HttpServletResponse", false, loader);
        Class<?> dispatcher = Class.forName(namespace + ".DispatcherType", false, loader);
        Class<?> asyncType = Class.forName(namespace + ".AsyncContext", false, loader);
        asyncContext = Proxy.newProxyInstance(loader, new Class<?>[] {asyncType}, (proxy, m, args) -> {
            if (m.getName().equals("complete")) {
                asyncCompleted = true;
                return null;
            }
            throw new UnsupportedOperationException(m.getName());
        });
        request = Proxy.newProxyInstance(loader, new Class<?>[] {requestType}, (proxy, m, args) -> {
            requestCalls++;
            switch (m.getName()) {
                case "getMethod": return method;
                case "getRequestURI": return uri;
                case "getContextPath": return contextPath;
                case "getServletPath":
                    if (servletPathFailure != null) {
                        throw servletPathFailure;
                    }
                    return servletPath == null ? "" : servletPath;
                case "getPathInfo": return pathInfo;
                case "getRemoteAddr": return remoteAddr;
                case "getHeader": {
                    List<String> values = requestHeaders.get(args[0]);
                    return values == null ? null : values.get(0);
                }
                case "getHeaders":
                    return Collections.enumeration(requestHeaders.getOrDefault(args[0], new ArrayList<>()));
                case "getUserPrincipal":
                    if (principalFailure != null) {
                        return (Principal) () -> {
                            throw principalFailure;
                        };
                    }
                    return principal == null ? null : (Principal) () -> principal;
                case "getDispatcherType": return dispatcherType == null ? null : valueOf(dispatcher, dispatcherType);
                case "isAsyncStarted": return asyncStarted;
                case "getAsyncContext": return asyncContext;
                case "getAttribute": return attributes.get(args[0]);
                case "setAttribute": attributes.put((String) args[0], args[1]); return null;
                default: throw new UnsupportedOperationException(m.getName());
            }
        });
        Runnable flushed = () -> committed = true;
        Object out = namespace.equals("jakarta.servlet") ? new JakartaOut(body, flushed) : new JavaxOut(body, flushed);
        response = Proxy.newProxyInstance(loader, new Class<?>[] {responseType}, (proxy, m, args) -> {
            switch (m.getName()) {
                case "isCommitted": return committed;
                case "reset": responseHeaders.clear(); body.reset(); return null;
                case "setStatus": status = (Integer) args[0]; return null;
                case "setHeader": responseHeaders.put((String) args[0], (String) args[1]); return null;
                case "setContentType": responseHeaders.put("Content-Type", (String) args[0]); return null;
                case "getOutputStream":
                    if (clientGone) {
                        throw new java.io.IOException("Connection reset by peer");
                    }
                    return out;
                default: throw new UnsupportedOperationException(m.getName());
            }
        });
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object valueOf(Class<?> enumType, String name) {
        return Enum.valueOf((Class) enumType, name);
    }

    FakeServlet header(String name, String... values) {
        requestHeaders.put(name, List.of(values));
        return this;
    }

    String body() {
        return body.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    static final class JakartaOut extends jakarta.servlet.ServletOutputStream {
        private final ByteArrayOutputStream sink;
        /** A flush commits the response. */
        private final Runnable flushed;

        JakartaOut(ByteArrayOutputStream sink, Runnable flushed) {
            this.sink = sink;
            this.flushed = flushed;
        }

        @Override
        public void write(int b) {
            sink.write(b);
        }

        @Override
        public void flush() {
            flushed.run();
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setWriteListener(jakarta.servlet.WriteListener listener) {
        }
    }

    static final class JavaxOut extends javax.servlet.ServletOutputStream {
        private final ByteArrayOutputStream sink;
        /** A flush commits the response. */
        private final Runnable flushed;

        JavaxOut(ByteArrayOutputStream sink, Runnable flushed) {
            this.sink = sink;
            this.flushed = flushed;
        }

        @Override
        public void write(int b) {
            sink.write(b);
        }

        @Override
        public void flush() {
            flushed.run();
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setWriteListener(javax.servlet.WriteListener listener) {
        }
    }
}
