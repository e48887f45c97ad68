package dev.ratelimit.http;

import dev.ratelimit.limit.ThrownByApplication;
import java.io.IOException;
import java.lang.reflect.Method;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;

/**
 * The parts of a servlet API ({@code javax.servlet} or {@code jakarta.servlet}) the agent uses,
 * through {@link ServletCalls} made for the API classes of the request's own class loader.
 *
 * <p>The runtime never links against a servlet API: a web application may bring its own copy,
 * in either namespace, in any class loader. One instance exists per servlet API found, cached
 * per request class. Only the method, URI, headers, peer address, principal and attributes are
 * read: never parameters (that would consume a form body) and never the session (that would
 * create one).
 */
final class ServletApi {
    private static final String[] NAMESPACES = {"jakarta.servlet", "javax.servlet"};

    private static final ClassValue<ServletApi> BY_REQUEST_CLASS = new ClassValue<ServletApi>() {
        @Override
        protected ServletApi computeValue(Class<?> type) {
            for (String namespace : NAMESPACES) {
                Class<?> request = find(type, namespace + ".http.HttpServletRequest");
                if (request != null) {
                    return BY_INTERFACE.get(request);
                }
            }
            return null;
        }
    };

    private static final ClassValue<ServletApi> BY_INTERFACE = new ClassValue<ServletApi>() {
        @Override
        protected ServletApi computeValue(Class<?> requestInterface) {
            try {
                return new ServletApi(requestInterface);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("unsupported servlet API " + requestInterface.getName(), e);
            }
        }
    };

    private final ServletCalls calls;
    /** {@code DispatcherType.REQUEST} of this API; null on Servlet 2.x. */
    private final Object requestDispatch;
    /** {@code DispatcherType.ERROR} and {@code FORWARD} of this API; null on Servlet 2.x. */
    private final Object errorDispatch;
    private final Object forwardDispatch;
    /**
     * The request attributes an error dispatch and a forward hold the client's URI in
     * ({@code jakarta.servlet.error.request_uri}, {@code jakarta.servlet.forward.request_uri}).
     */
    private final String errorRequestUri;
    private final String forwardRequestUri;
    /**
     * The request attribute an error dispatch holds the client's method in
     * ({@code jakarta.servlet.error.method}): Servlet 6.1 dispatches an error page as a
     * {@code GET}, whatever the client sent (Tomcat 11, Jetty 12's ee11), where earlier versions
     * kept the client's method. Javax containers never set it.
     */
    private final String errorMethod;
    /** {@code ServletRequestWrapper} of this API and its {@code getRequest()}; null where it cannot be found. */
    private final Class<?> requestWrapper;
    private final java.lang.reflect.Method wrapped;

    private ServletApi(Class<?> request) throws ReflectiveOperationException {
        ServletCalls.Api api = new ServletCalls.Api(request);
        calls = ServletCalls.of(api);
        requestDispatch = api.dispatcherType == null ? null : constant(api.dispatcherType, "REQUEST");
        errorDispatch = api.dispatcherType == null ? null : constant(api.dispatcherType, "ERROR");
        forwardDispatch = api.dispatcherType == null ? null : constant(api.dispatcherType, "FORWARD");
        String namespace = api.namespace;
        errorRequestUri = namespace + ".error.request_uri";
        forwardRequestUri = namespace + ".forward.request_uri";
        errorMethod = namespace + ".error.method";
        Class<?> wrapper;
        java.lang.reflect.Method getRequest;
        try {
            wrapper = Class.forName(namespace + ".ServletRequestWrapper", false, request.getClassLoader());
            getRequest = wrapper.getMethod("getRequest");
        } catch (ReflectiveOperationException | LinkageError | RuntimeException missing) {
            wrapper = null;
            getRequest = null;
        }
        requestWrapper = wrapper;
        wrapped = getRequest;
    }

    /** The API of a request object, or {@code null} when it is not an HTTP servlet request. */
    static ServletApi of(Object request) {
        return BY_REQUEST_CLASS.get(request.getClass());
    }

    /** Whether {@code request} is a request of this API: its interface, from the same loader. */
    boolean matches(Object request) {
        return request != null && of(request) == this;
    }

    private static Class<?> find(Class<?> type, String interfaceName) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            for (Class<?> implemented : c.getInterfaces()) {
                if (implemented.getName().equals(interfaceName)) {
                    return implemented;
                }
                Class<?> inherited = find(implemented, interfaceName);
                if (inherited != null) {
                    return inherited;
                }
            }
        }
        return null;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object constant(Class<?> dispatcherEnum, String name) {
        return Enum.valueOf((Class) dispatcherEnum, name);
    }

    boolean isInitialDispatch(Object request) {
        if (requestDispatch == null) {
            return true;
        }
        // an enum constant: compared by identity, no name read. A container that answers null
        // (none should) is treated as serving a plain request, so the request is limited.
        Object type = calls.dispatcherType(request);
        return type == requestDispatch || type == null;
    }

    /**
     * For an error dispatch or a forward, the URI the client asked for (the request holds it in an
     * attribute); null for any other dispatch, or when the container did not set it.
     */
    String clientUriOfDispatch(Object request) {
        if (errorDispatch == null) {
            return null;
        }
        Object type = calls.dispatcherType(request);
        Object uri = type == errorDispatch ? attribute(request, errorRequestUri)
                : type == forwardDispatch ? attribute(request, forwardRequestUri) : null;
        return uri instanceof String ? (String) uri : null;
    }

    String method(Object request) {
        return calls.method(request);
    }

    /**
     * The method the client sent, for the first dispatch of a request the container answered
     * itself ({@link #clientUriOfDispatch}): at an error dispatch, the one the container kept in
     * its attribute when it set one (Servlet 6.1 makes the dispatch itself a {@code GET}), else the
     * request's own.
     */
    String clientMethodOfDispatch(Object request) {
        if (errorDispatch != null && calls.dispatcherType(request) == errorDispatch) {
            Object method = attribute(request, errorMethod);
            if (method instanceof String) {
                return (String) method;
            }
        }
        return calls.method(request);
    }

    String requestUri(Object request) {
        return calls.requestUri(request);
    }

    String contextPath(Object request) {
        return calls.contextPath(request);
    }

    String servletPath(Object request) {
        return calls.servletPath(request);
    }

    String pathInfo(Object request) {
        return calls.pathInfo(request);
    }

    String remoteAddr(Object request) {
        return calls.remoteAddr(request);
    }

    String header(Object request, String name) {
        return calls.header(request, name);
    }

    /** Every value of a header, one per header line, as sent. */
    List<String> headers(Object request, String name) {
        Enumeration<?> values = calls.headers(request, name);
        if (values == null || !values.hasMoreElements()) {
            return Collections.emptyList();
        }
        List<String> list = new ArrayList<>(1);
        while (values.hasMoreElements()) {
            list.add(String.valueOf(values.nextElement()));
        }
        return list;
    }

    /**
     * Whether {@code request} is a wrapper ({@code ServletRequestWrapper}, at most 32 deep) of
     * {@code target}. Asked only of a request that does not show the attribute the agent marks
     * a seen request with, while the thread serves another: rare, so by reflection.
     */
    boolean wraps(Object request, Object target) {
        if (requestWrapper == null) {
            return false;
        }
        Object current = request;
        for (int depth = 0; depth < 32 && requestWrapper.isInstance(current); depth++) {
            try {
                current = wrapped.invoke(current);
            } catch (ReflectiveOperationException | RuntimeException unreadable) {
                return false;
            }
            if (current == target) {
                return true;
            }
        }
        return false;
    }

    /** Whether the request carries header {@code name} on more than one line. */
    boolean repeated(Object request, String name) {
        Enumeration<?> values = calls.headers(request, name);
        if (values == null || !values.hasMoreElements()) {
            return false;
        }
        values.nextElement();
        return values.hasMoreElements();
    }

    String principal(Object request) {
        Principal principal = calls.userPrincipal(request);
        if (principal == null) {
            return null;
        }
        try {
            return principal.getName();
        } catch (RuntimeException | Error e) {
            throw ThrownByApplication.report("the request's Principal.getName()", e);
        }
    }

    /** Whether the application has put the request into asynchronous mode. */
    boolean isAsyncStarted(Object request) {
        return calls.isAsyncStarted(request);
    }

    /** Completes the request's asynchronous processing: the container sends the response now. */
    void completeAsync(Object request) {
        Object context = calls.asyncContext(request);
        if (context != null) {
            calls.completeAsync(context);
        }
    }

    Object attribute(Object request, String name) {
        return calls.attribute(request, name);
    }

    void setAttribute(Object request, String name, Object value) {
        calls.setAttribute(request, name, value);
    }

    boolean isCommitted(Object response) {
        return calls.isCommitted(response);
    }

    void setHeader(Object response, String name, String value) {
        calls.setHeader(response, name, value);
    }

    /**
     * Replaces whatever the response holds with a complete response of this status and body,
     * left in the response's buffer: the container sends it when the request ends, as it sends
     * the application's own responses, with the body's length.
     *
     * <p>Not sent at once (neither a Content-Length, which Jetty commits on as soon as that many
     * bytes are written, nor a flush): the request's body is usually unread, and a response
     * committed before the container has looked at it leaves the container nothing to decide.
     * Jetty then closed the connection without saying so, and a kept-alive client's next request
     * on it failed (HTTP review, fortieth round). Left to the end of the request, Jetty says
     * {@code Connection: close} over a body it will not read, and Tomcat reads up to its limit
     * (2 MB by default) and keeps the connection, or says it closes it.
     */
    void replace(Object response, int status, List<String[]> headerPairs, String contentType, byte[] body) {
        calls.reset(response);
        // Undertow's reset() keeps a character encoding the application set, and its
        // setContentType appends it: a UTF-8 body labelled "charset=UTF-16". Null unsets it.
        try {
            calls.setCharacterEncoding(response, null);
        } catch (RuntimeException | LinkageError olderContainer) {
            // a container that will not take null: the 429 is written all the same
        }
        UndertowCookies.clear(response);
        calls.setStatus(response, status);
        for (String[] pair : headerPairs) {
            calls.setHeader(response, pair[0], pair[1]);
        }
        calls.setContentType(response, contentType);
        try {
            calls.outputStream(response).write(body);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Undertow 2.3 keeps the response's cookies apart from its headers, and its {@code reset()}
     * clears only the headers: a cookie the application added before a method rule refused its
     * call was sent on the 429. Its exchange's cookies are removed here; any other container's
     * response is left alone (their {@code reset()} clears cookies with the headers).
     */
    static final class UndertowCookies {
        private static final String RESPONSE = "io.undertow.servlet.spec.HttpServletResponseImpl";
        private static final ClassValue<Method[]> CALLS = new ClassValue<>() {
            @Override
            protected Method[] computeValue(Class<?> type) {
                if (!type.getName().equals(RESPONSE)) {
                    return null;
                }
                try {
                    Method exchange = type.getMethod("getExchange");
                    return new Method[] {exchange, exchange.getReturnType().getMethod("getResponseCookies")};
                } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                    return null;
                }
            }
        };

        static void clear(Object response) {
            Method[] calls = CALLS.get(response.getClass());
            if (calls == null) {
                return;
            }
            try {
                Object cookies = calls[1].invoke(calls[0].invoke(response));
                if (cookies instanceof Map) {
                    // a view of the exchange's cookies (its responseCookies() iterator is read-only)
                    ((Map<?, ?>) cookies).clear();
                }
            } catch (ReflectiveOperationException | RuntimeException | LinkageError keep) {
                // an Undertow whose cookies cannot be removed: the 429 is written all the same
            }
        }
    }
}
