package dev.ratelimit.http;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.security.Principal;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;

/**
 * The calls the agent makes on one servlet API's request and response objects, typed
 * {@code Object} because the agent never links against a servlet API.
 *
 * <p>{@link #of} generates, once per servlet API, a subclass whose every method is one cast and
 * one interface call ({@code ((HttpServletRequest) request).getRequestURI()}), loaded by a class
 * loader that takes this class from the agent and every other name from that API's loader. The JIT inlines such a call into the request's
 * decision. Method handles held in fields, which this class replaced, are not constants to the
 * JIT: each call went through the handle's own code, about 1% of the CPU of a served request
 * (see benchmarks/README.md). Should the class not be made, {@link Handles} makes the same calls
 * through method handles.
 */
public abstract class ServletCalls {
    private static final System.Logger LOG = System.getLogger("dev.ratelimit");

    /** One servlet API, found in the request interface's loader: the method it calls for each of ours. */
    static final class Api {
        final Class<?> request;
        /** {@code jakarta.servlet} or {@code javax.servlet}: the API's package. */
        final String namespace;
        /** Null on Servlet 2.x, which has no dispatcher types. */
        final Class<?> dispatcherType;
        /**
         * For each abstract method of {@link ServletCalls}, by name, the API's method it calls on
         * its first argument; null for {@code dispatcherType} on Servlet 2.x (the call answers null).
         */
        final Map<String, Method> targets = new LinkedHashMap<>();

        Api(Class<?> request) throws ReflectiveOperationException {
            String name = request.getName();
            String namespace = name.substring(0, name.length() - ".http.HttpServletRequest".length());
            ClassLoader loader = request.getClassLoader();
            Class<?> response = Class.forName(namespace + ".http.HttpServletResponse", false, loader);
            Class<?> servletRequest = Class.forName(namespace + ".ServletRequest", false, loader);
            Class<?> servletResponse = Class.forName(namespace + ".ServletResponse", false, loader);
            this.request = request;
            this.namespace = namespace;
            dispatcherType = dispatcherEnum(namespace, loader);
            targets.put("method", request.getMethod("getMethod"));
            targets.put("requestUri", request.getMethod("getRequestURI"));
            targets.put("contextPath", request.getMethod("getContextPath"));
            targets.put("servletPath", request.getMethod("getServletPath"));
            targets.put("pathInfo", request.getMethod("getPathInfo"));
            targets.put("remoteAddr", servletRequest.getMethod("getRemoteAddr"));
            targets.put("header", request.getMethod("getHeader", String.class));
            targets.put("headers", request.getMethod("getHeaders", String.class));
            targets.put("userPrincipal", request.getMethod("getUserPrincipal"));
            targets.put("dispatcherType", dispatcherType == null ? null : servletRequest.getMethod("getDispatcherType"));
            targets.put("isAsyncStarted", dispatcherType == null ? null : servletRequest.getMethod("isAsyncStarted"));
            targets.put("asyncContext", dispatcherType == null ? null : servletRequest.getMethod("getAsyncContext"));
            targets.put("completeAsync", dispatcherType == null ? null
                    : Class.forName(namespace + ".AsyncContext", false, loader).getMethod("complete"));
            targets.put("attribute", servletRequest.getMethod("getAttribute", String.class));
            targets.put("setAttribute", servletRequest.getMethod("setAttribute", String.class, Object.class));
            targets.put("isCommitted", servletResponse.getMethod("isCommitted"));
            targets.put("reset", servletResponse.getMethod("reset"));
            targets.put("setStatus", response.getMethod("setStatus", int.class));
            targets.put("setHeader", response.getMethod("setHeader", String.class, String.class));
            targets.put("setCharacterEncoding", servletResponse.getMethod("setCharacterEncoding", String.class));
            targets.put("setContentType", servletResponse.getMethod("setContentType", String.class));
            targets.put("outputStream", servletResponse.getMethod("getOutputStream"));
        }

        private static Class<?> dispatcherEnum(String namespace, ClassLoader loader) {
            try {
                return Class.forName(namespace + ".DispatcherType", false, loader);
            } catch (ClassNotFoundException servlet2) {
                return null;
            }
        }
    }

    /** This class's abstract method {@code name}. */
    private static Method ours(String name) {
        for (Method m : ServletCalls.class.getDeclaredMethods()) {
            if (m.getName().equals(name) && Modifier.isAbstract(m.getModifiers())) {
                return m;
            }
        }
        throw new IllegalArgumentException(name);
    }

    /** Direct calls when they can be generated, else calls through method handles. */
    static ServletCalls of(Api api) throws ReflectiveOperationException {
        try {
            return generate(api);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            LOG.log(System.Logger.Level.WARNING, "rate-limit-agent: calls to " + api.request.getName()
                    + " go through method handles, a little slower: " + e);
            return new Handles(api);
        }
    }

    /**
     * A subclass whose every method casts its first argument to the API's type and calls the
     * API's method with the rest. Written with ASM (which Byte Buddy carries, and which the agent
     * has loaded already to weave classes): Byte Buddy's own builder loads so many classes of its
     * own for this that the first request took about 200 ms longer.
     */
    static ServletCalls generate(Api api) throws ReflectiveOperationException {
        String name = ServletCalls.class.getName() + "$Direct$" + api.request.getName().replace('.', '_');
        String self = name.replace('.', '/');
        String parent = Type.getInternalName(ServletCalls.class);
        ClassWriter writer = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        writer.visit(Opcodes.V1_8, Opcodes.ACC_PUBLIC | Opcodes.ACC_FINAL | Opcodes.ACC_SUPER | Opcodes.ACC_SYNTHETIC,
                self, null, parent, null);
        MethodVisitor init = writer.visitMethod(Opcodes.ACC_PUBLIC, "<init>", "()V", null, null);
        init.visitCode();
        init.visitVarInsn(Opcodes.ALOAD, 0);
        init.visitMethodInsn(Opcodes.INVOKESPECIAL, parent, "<init>", "()V", false);
        init.visitInsn(Opcodes.RETURN);
        init.visitMaxs(0, 0);
        init.visitEnd();
        for (Map.Entry<String, Method> target : api.targets.entrySet()) {
            call(writer, ours(target.getKey()), target.getValue());
        }
        writer.visitEnd();
        Class<?> type = new DirectLoader(ServletCalls.class.getClassLoader(), api.request.getClassLoader())
                .define(name, writer.toByteArray());
        return (ServletCalls) type.getDeclaredConstructor().newInstance();
    }

    /** Writes our method {@code ours} as a call of {@code target} on the first argument, or as {@code return null}. */
    private static void call(ClassWriter writer, Method ours, Method target) {
        Class<?>[] parameters = ours.getParameterTypes();
        MethodVisitor method = writer.visitMethod(Opcodes.ACC_PUBLIC, ours.getName(), Type.getMethodDescriptor(ours),
                null, null);
        method.visitCode();
        if (target == null) {
            // a call Servlet 2.x does not have: nothing, false or null
            if (ours.getReturnType() == boolean.class) {
                method.visitInsn(Opcodes.ICONST_0);
            } else if (ours.getReturnType() != void.class) {
                method.visitInsn(Opcodes.ACONST_NULL);
            }
        } else {
            String owner = Type.getInternalName(target.getDeclaringClass());
            method.visitVarInsn(Opcodes.ALOAD, 1);
            method.visitTypeInsn(Opcodes.CHECKCAST, owner);
            for (int i = 1, slot = 2; i < parameters.length; i++) {
                Type parameter = Type.getType(parameters[i]);
                method.visitVarInsn(parameter.getOpcode(Opcodes.ILOAD), slot);
                slot += parameter.getSize();
            }
            method.visitMethodInsn(Opcodes.INVOKEINTERFACE, owner, target.getName(), Type.getMethodDescriptor(target), true);
        }
        method.visitInsn(Type.getType(ours.getReturnType()).getOpcode(Opcodes.IRETURN));
        method.visitMaxs(0, 0);
        method.visitEnd();
    }

    /**
     * Loads one generated class: its supertype, {@link ServletCalls}, is the agent's; every other
     * name it refers to (the servlet API, the JDK) is what the servlet API's own loader answers,
     * so that the casts are to the request's own types even should the agent's loader see another
     * copy of the API.
     */
    private static final class DirectLoader extends ClassLoader {
        private final ClassLoader api;

        DirectLoader(ClassLoader agent, ClassLoader api) {
            super(agent);
            this.api = api;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.equals(ServletCalls.class.getName())) {
                return ServletCalls.class;
            }
            Class<?> defined = findLoadedClass(name);
            return defined != null ? defined : Class.forName(name, false, api);
        }

        Class<?> define(String name, byte[] bytes) {
            return defineClass(name, bytes, 0, bytes.length, ServletCalls.class.getProtectionDomain());
        }
    }

    protected ServletCalls() {
    }

    public abstract String method(Object request);

    public abstract String requestUri(Object request);

    public abstract String contextPath(Object request);

    /** {@code getServletPath()}: the part of the path the container mapped to the servlet. */
    public abstract String servletPath(Object request);

    /** {@code getPathInfo()}: the rest of the path after the servlet path; null for none. */
    public abstract String pathInfo(Object request);

    public abstract String remoteAddr(Object request);

    public abstract String header(Object request, String name);

    public abstract Enumeration<?> headers(Object request, String name);

    public abstract Principal userPrincipal(Object request);

    /** {@code getDispatcherType()}; null on Servlet 2.x. */
    public abstract Object dispatcherType(Object request);

    /** {@code isAsyncStarted()}; false on Servlet 2.x. */
    public abstract boolean isAsyncStarted(Object request);

    /** {@code getAsyncContext()}; null on Servlet 2.x. */
    public abstract Object asyncContext(Object request);

    /** {@code AsyncContext.complete()} on {@code asyncContext}; nothing on Servlet 2.x. */
    public abstract void completeAsync(Object asyncContext);

    public abstract Object attribute(Object request, String name);

    public abstract void setAttribute(Object request, String name, Object value);

    public abstract boolean isCommitted(Object response);

    public abstract void reset(Object response);

    public abstract void setStatus(Object response, int status);

    public abstract void setHeader(Object response, String name, String value);

    /** {@code setCharacterEncoding(charset)}; null: none (Servlet 6 says so; Tomcat 9, Jetty and Undertow do it before). */
    public abstract void setCharacterEncoding(Object response, String charset);

    public abstract void setContentType(Object response, String type);

    public abstract OutputStream outputStream(Object response) throws IOException;

    /** The same calls through method handles: for when a class cannot be generated. */
    static final class Handles extends ServletCalls {
        private final MethodHandle method;
        private final MethodHandle requestUri;
        private final MethodHandle contextPath;
        private final MethodHandle servletPath;
        private final MethodHandle pathInfo;
        private final MethodHandle remoteAddr;
        private final MethodHandle header;
        private final MethodHandle headers;
        private final MethodHandle userPrincipal;
        private final MethodHandle dispatcherType;
        private final MethodHandle isAsyncStarted;
        private final MethodHandle asyncContext;
        private final MethodHandle completeAsync;
        private final MethodHandle getAttribute;
        private final MethodHandle setAttribute;
        private final MethodHandle isCommitted;
        private final MethodHandle reset;
        private final MethodHandle setStatus;
        private final MethodHandle setHeader;
        private final MethodHandle setCharacterEncoding;
        private final MethodHandle setContentType;
        private final MethodHandle outputStream;

        Handles(Api api) throws ReflectiveOperationException {
            method = handle(api, "method");
            requestUri = handle(api, "requestUri");
            contextPath = handle(api, "contextPath");
            servletPath = handle(api, "servletPath");
            pathInfo = handle(api, "pathInfo");
            remoteAddr = handle(api, "remoteAddr");
            header = handle(api, "header");
            headers = handle(api, "headers");
            userPrincipal = handle(api, "userPrincipal");
            dispatcherType = handle(api, "dispatcherType");
            isAsyncStarted = handle(api, "isAsyncStarted");
            asyncContext = handle(api, "asyncContext");
            completeAsync = handle(api, "completeAsync");
            getAttribute = handle(api, "attribute");
            setAttribute = handle(api, "setAttribute");
            isCommitted = handle(api, "isCommitted");
            reset = handle(api, "reset");
            setStatus = handle(api, "setStatus");
            setHeader = handle(api, "setHeader");
            setCharacterEncoding = handle(api, "setCharacterEncoding");
            setContentType = handle(api, "setContentType");
            outputStream = handle(api, "outputStream");
        }

        /** The API's method behind our method {@code name}, typed as ours (Object first); null if none. */
        private static MethodHandle handle(Api api, String name) throws ReflectiveOperationException {
            Method target = api.targets.get(name);
            if (target == null) {
                return null;
            }
            Method ours = ours(name);
            return MethodHandles.publicLookup().unreflect(target)
                    .asType(MethodType.methodType(ours.getReturnType(), ours.getParameterTypes()));
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

        @Override
        public String method(Object request) {
            try {
                return (String) method.invokeExact(request);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public String requestUri(Object request) {
            try {
                return (String) requestUri.invokeExact(request);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public String contextPath(Object request) {
            try {
                return (String) contextPath.invokeExact(request);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public String servletPath(Object request) {
            try {
                return (String) servletPath.invokeExact(request);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public String pathInfo(Object request) {
            try {
                return (String) pathInfo.invokeExact(request);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public String remoteAddr(Object request) {
            try {
                return (String) remoteAddr.invokeExact(request);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public String header(Object request, String name) {
            try {
                return (String) header.invokeExact(request, name);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public Enumeration<?> headers(Object request, String name) {
            try {
                return (Enumeration<?>) headers.invokeExact(request, name);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public Principal userPrincipal(Object request) {
            try {
                return (Principal) userPrincipal.invokeExact(request);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public Object dispatcherType(Object request) {
            if (dispatcherType == null) {
                return null;
            }
            try {
                return (Object) dispatcherType.invokeExact(request);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public Object asyncContext(Object request) {
            if (asyncContext == null) {
                return null;
            }
            try {
                return (Object) asyncContext.invokeExact(request);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public void completeAsync(Object context) {
            if (completeAsync == null) {
                return;
            }
            try {
                completeAsync.invokeExact(context);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public boolean isAsyncStarted(Object request) {
            if (isAsyncStarted == null) {
                return false;
            }
            try {
                return (boolean) isAsyncStarted.invokeExact(request);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public Object attribute(Object request, String name) {
            try {
                return (Object) getAttribute.invokeExact(request, name);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public void setAttribute(Object request, String name, Object value) {
            try {
                setAttribute.invokeExact(request, name, value);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public boolean isCommitted(Object response) {
            try {
                return (boolean) isCommitted.invokeExact(response);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public void reset(Object response) {
            try {
                reset.invokeExact(response);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public void setStatus(Object response, int status) {
            try {
                setStatus.invokeExact(response, status);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public void setHeader(Object response, String name, String value) {
            try {
                setHeader.invokeExact(response, name, value);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public void setCharacterEncoding(Object response, String charset) {
            try {
                setCharacterEncoding.invokeExact(response, charset);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public void setContentType(Object response, String type) {
            try {
                setContentType.invokeExact(response, type);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public OutputStream outputStream(Object response) throws IOException {
            try {
                return (OutputStream) outputStream.invokeExact(response);
            } catch (IOException e) {
                throw e;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }
}
