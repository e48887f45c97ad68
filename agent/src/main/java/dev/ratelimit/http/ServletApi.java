package dev.ratelimit.http;

import java.io.OutputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * The parts of a servlet API ({@code javax.servlet} or {@code jakarta.servlet}) the agent uses,
 * as method handles bound to the API classes of the request's own class loader.
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

    private final MethodHandle method;
    private final MethodHandle requestUri;
    private final MethodHandle contextPath;
    private final MethodHandle remoteAddr;
    private final MethodHandle header;
    private final MethodHandle headers;
    private final MethodHandle userPrincipal;
    /** {@code getDispatcherType()} as (Object) -> Object; null on Servlet 2.x. */
    private final MethodHandle dispatcherType;
    /** {@code DispatcherType.REQUEST} of this API; null on Servlet 2.x. */
    private final Object requestDispatch;
    private final MethodHandle getAttribute;
    private final MethodHandle setAttribute;
    private final MethodHandle isCommitted;
    private final MethodHandle reset;
    private final MethodHandle setStatus;
    private final MethodHandle setHeader;
    private final MethodHandle setContentType;
    private final MethodHandle setContentLength;
    private final MethodHandle outputStream;

    private ServletApi(Class<?> request) throws ReflectiveOperationException {
        String namespace = request.getName().substring(0, request.getName().length() - ".http.HttpServletRequest".length());
        ClassLoader loader = request.getClassLoader();
        Class<?> response = Class.forName(namespace + ".http.HttpServletResponse", false, loader);
        Class<?> servletRequest = Class.forName(namespace + ".ServletRequest", false, loader);
        Class<?> servletResponse = Class.forName(namespace + ".ServletResponse", false, loader);
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        method = handle(lookup, request, "getMethod", String.class);
        requestUri = handle(lookup, request, "getRequestURI", String.class);
        contextPath = handle(lookup, request, "getContextPath", String.class);
        remoteAddr = handle(lookup, servletRequest, "getRemoteAddr", String.class);
        header = handle(lookup, request, "getHeader", String.class, String.class);
        headers = handle(lookup, request, "getHeaders", Enumeration.class, String.class);
        userPrincipal = handle(lookup, request, "getUserPrincipal", Principal.class);
        Class<?> dispatcherEnum = dispatcherEnum(namespace, loader);
        if (dispatcherEnum == null) {
            dispatcherType = null;
            requestDispatch = null;
        } else {
            dispatcherType = lookup.findVirtual(servletRequest, "getDispatcherType", MethodType.methodType(dispatcherEnum))
                    .asType(MethodType.methodType(Object.class, Object.class));
            requestDispatch = requestConstant(dispatcherEnum);
        }
        getAttribute = handle(lookup, servletRequest, "getAttribute", Object.class, String.class);
        setAttribute = handle(lookup, servletRequest, "setAttribute", void.class, String.class, Object.class);
        isCommitted = handle(lookup, servletResponse, "isCommitted", boolean.class);
        reset = handle(lookup, servletResponse, "reset", void.class);
        setStatus = handle(lookup, response, "setStatus", void.class, int.class);
        setHeader = handle(lookup, response, "setHeader", void.class, String.class, String.class);
        setContentType = handle(lookup, servletResponse, "setContentType", void.class, String.class);
        setContentLength = handle(lookup, servletResponse, "setContentLength", void.class, int.class);
        Class<?> stream = Class.forName(namespace + ".ServletOutputStream", false, loader);
        outputStream = lookup.findVirtual(servletResponse, "getOutputStream", MethodType.methodType(stream))
                .asType(MethodType.methodType(OutputStream.class, Object.class));
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

    /** A handle of type (Object, params...) -> returnType, for calls without casts at the call site. */
    private static MethodHandle handle(MethodHandles.Lookup lookup, Class<?> owner, String name, Class<?> returnType,
            Class<?>... parameters) throws ReflectiveOperationException {
        MethodHandle handle = lookup.findVirtual(owner, name, MethodType.methodType(returnType, parameters));
        return handle.asType(handle.type().changeParameterType(0, Object.class));
    }

    /** The API's {@code DispatcherType}, or null on Servlet 2.x, which has none. */
    private static Class<?> dispatcherEnum(String namespace, ClassLoader loader) {
        try {
            return Class.forName(namespace + ".DispatcherType", false, loader);
        } catch (ClassNotFoundException servlet2) {
            return null;
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object requestConstant(Class<?> dispatcherEnum) {
        return Enum.valueOf((Class) dispatcherEnum, "REQUEST");
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException) {
            return (RuntimeException) t;
        }
        if (t instanceof Error) {
            throw (Error) t;
        }
        return new IllegalStateException(t);
    }

    boolean isInitialDispatch(Object request) {
        if (dispatcherType == null) {
            return true;
        }
        try {
            // an enum constant: compared by identity, no name read. A container that answers null
            // (none should) is treated as serving a plain request, so the request is limited.
            Object type = (Object) dispatcherType.invokeExact(request);
            return type == requestDispatch || type == null;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    String method(Object request) {
        try {
            return (String) method.invokeExact(request);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    String requestUri(Object request) {
        try {
            return (String) requestUri.invokeExact(request);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    String contextPath(Object request) {
        try {
            return (String) contextPath.invokeExact(request);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    String remoteAddr(Object request) {
        try {
            return (String) remoteAddr.invokeExact(request);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    String header(Object request, String name) {
        try {
            return (String) header.invokeExact(request, name);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Every value of a header, one per header line, as sent. */
    List<String> headers(Object request, String name) {
        Enumeration<?> values;
        try {
            values = (Enumeration<?>) headers.invokeExact(request, name);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (values == null || !values.hasMoreElements()) {
            return Collections.emptyList();
        }
        List<String> list = new ArrayList<>(1);
        while (values.hasMoreElements()) {
            list.add(String.valueOf(values.nextElement()));
        }
        return list;
    }

    String principal(Object request) {
        try {
            Principal principal = (Principal) userPrincipal.invokeExact(request);
            return principal == null ? null : principal.getName();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    Object attribute(Object request, String name) {
        try {
            return (Object) getAttribute.invokeExact(request, name);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    void setAttribute(Object request, String name, Object value) {
        try {
            setAttribute.invokeExact(request, name, value);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    boolean isCommitted(Object response) {
        try {
            return (boolean) isCommitted.invokeExact(response);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    void setHeader(Object response, String name, String value) {
        try {
            setHeader.invokeExact(response, name, value);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Replaces whatever the response holds with a complete response of this status and body. */
    void replace(Object response, int status, List<String[]> headerPairs, String contentType, byte[] body) {
        try {
            reset.invokeExact(response);
            setStatus.invokeExact(response, status);
            for (String[] pair : headerPairs) {
                setHeader.invokeExact(response, pair[0], pair[1]);
            }
            setContentType.invokeExact(response, contentType);
            setContentLength.invokeExact(response, body.length);
            OutputStream out = (OutputStream) outputStream.invokeExact(response);
            out.write(body);
            out.flush();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
