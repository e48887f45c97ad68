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

    /** One servlet API's types, found in the request interface's loader. */
    static final class Api {
        final Class<?> request;
        final Class<?> response;
        final Class<?> servletRequest;
        final Class<?> servletResponse;
        final Class<?> outputStream;
        /** Null on Servlet 2.x, which has no dispatcher types. */
        final Class<?> dispatcherType;

        Api(Class<?> request) throws ClassNotFoundException {
            String name = request.getName();
            String namespace = name.substring(0, name.length() - ".http.HttpServletRequest".length());
            ClassLoader loader = request.getClassLoader();
            this.request = request;
            response = Class.forName(namespace + ".http.HttpServletResponse", false, loader);
            servletRequest = Class.forName(namespace + ".ServletRequest", false, loader);
            servletResponse = Class.forName(namespace + ".ServletResponse", false, loader);
            outputStream = Class.forName(namespace + ".ServletOutputStream", false, loader);
            dispatcherType = dispatcherEnum(namespace, loader);
        }

        private static Class<?> dispatcherEnum(String namespace, ClassLoader loader) {
            try {
                return Class.forName(namespace + ".DispatcherType", false, loader);
            } catch (ClassNotFoundException servlet2) {
                return null;
            }
        }
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
        call(writer, "method", api.request.getMethod("getMethod"));
        call(writer, "requestUri", api.request.getMethod("getRequestURI"));
        call(writer, "contextPath", api.request.getMethod("getContextPath"));
        call(writer, "remoteAddr", api.servletRequest.getMethod("getRemoteAddr"));
        call(writer, "header", api.request.getMethod("getHeader", String.class));
        call(writer, "headers", api.request.getMethod("getHeaders", String.class));
        call(writer, "userPrincipal", api.request.getMethod("getUserPrincipal"));
        call(writer, "dispatcherType", api.dispatcherType == null ? null : api.servletRequest.getMethod("getDispatcherType"));
        call(writer, "attribute", api.servletRequest.getMethod("getAttribute", String.class));
        call(writer, "setAttribute", api.servletRequest.getMethod("setAttribute", String.class, Object.class));
        call(writer, "isCommitted", api.servletResponse.getMethod("isCommitted"));
        call(writer, "reset", api.servletResponse.getMethod("reset"));
        call(writer, "setStatus", api.response.getMethod("setStatus", int.class));
        call(writer, "setHeader", api.response.getMethod("setHeader", String.class, String.class));
        call(writer, "setContentType", api.servletResponse.getMethod("setContentType", String.class));
        call(writer, "setContentLength", api.servletResponse.getMethod("setContentLength", int.class));
        call(writer, "outputStream", api.servletResponse.getMethod("getOutputStream"));
        writer.visitEnd();
        Class<?> type = new DirectLoader(ServletCalls.class.getClassLoader(), api.request.getClassLoader())
                .define(name, writer.toByteArray());
        return (ServletCalls) type.getDeclaredConstructor().newInstance();
    }

    /** Writes this class's method {@code name} as a call of {@code target} on the first argument, or as {@code return null}. */
    private static void call(ClassWriter writer, String name, Method target) {
        Method ours = null;
        for (Method m : ServletCalls.class.getDeclaredMethods()) {
            if (m.getName().equals(name) && Modifier.isAbstract(m.getModifiers())) {
                ours = m;
            }
        }
        Class<?>[] parameters = ours.getParameterTypes();
        MethodVisitor method = writer.visitMethod(Opcodes.ACC_PUBLIC, name, Type.getMethodDescriptor(ours), null, null);
        method.visitCode();
        if (target == null) {
            method.visitInsn(Opcodes.ACONST_NULL);
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

    public abstract String remoteAddr(Object request);

    public abstract String header(Object request, String name);

    public abstract Enumeration<?> headers(Object request, String name);

    public abstract Principal userPrincipal(Object request);

    /** {@code getDispatcherType()}; null on Servlet 2.x. */
    public abstract Object dispatcherType(Object request);

    public abstract Object attribute(Object request, String name);

    public abstract void setAttribute(Object request, String name, Object value);

    public abstract boolean isCommitted(Object response);

    public abstract void reset(Object response);

    public abstract void setStatus(Object response, int status);

    public abstract void setHeader(Object response, String name, String value);

    public abstract void setContentType(Object response, String type);

    public abstract void setContentLength(Object response, int length);

    public abstract OutputStream outputStream(Object response) throws IOException;

    /** The same calls through method handles: for when a class cannot be generated. */
    static final class Handles extends ServletCalls {
        private final MethodHandle method;
        private final MethodHandle requestUri;
        private final MethodHandle contextPath;
        private final MethodHandle remoteAddr;
        private final MethodHandle header;
        private final MethodHandle headers;
        private final MethodHandle userPrincipal;
        private final MethodHandle dispatcherType;
        private final MethodHandle getAttribute;
        private final MethodHandle setAttribute;
        private final MethodHandle isCommitted;
        private final MethodHandle reset;
        private final MethodHandle setStatus;
        private final MethodHandle setHeader;
        private final MethodHandle setContentType;
        private final MethodHandle setContentLength;
        private final MethodHandle outputStream;

        Handles(Api api) throws ReflectiveOperationException {
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            method = handle(lookup, api.request, "getMethod", String.class);
            requestUri = handle(lookup, api.request, "getRequestURI", String.class);
            contextPath = handle(lookup, api.request, "getContextPath", String.class);
            remoteAddr = handle(lookup, api.servletRequest, "getRemoteAddr", String.class);
            header = handle(lookup, api.request, "getHeader", String.class, String.class);
            headers = handle(lookup, api.request, "getHeaders", Enumeration.class, String.class);
            userPrincipal = handle(lookup, api.request, "getUserPrincipal", Principal.class);
            dispatcherType = api.dispatcherType == null ? null
                    : handle(lookup, api.servletRequest, "getDispatcherType", api.dispatcherType)
                            .asType(MethodType.methodType(Object.class, Object.class));
            getAttribute = handle(lookup, api.servletRequest, "getAttribute", Object.class, String.class);
            setAttribute = handle(lookup, api.servletRequest, "setAttribute", void.class, String.class, Object.class);
            isCommitted = handle(lookup, api.servletResponse, "isCommitted", boolean.class);
            reset = handle(lookup, api.servletResponse, "reset", void.class);
            setStatus = handle(lookup, api.response, "setStatus", void.class, int.class);
            setHeader = handle(lookup, api.response, "setHeader", void.class, String.class, String.class);
            setContentType = handle(lookup, api.servletResponse, "setContentType", void.class, String.class);
            setContentLength = handle(lookup, api.servletResponse, "setContentLength", void.class, int.class);
            outputStream = handle(lookup, api.servletResponse, "getOutputStream", api.outputStream)
                    .asType(MethodType.methodType(OutputStream.class, Object.class));
        }

        /** A handle of type (Object, params...) -> returnType, for calls without casts at the call site. */
        private static MethodHandle handle(MethodHandles.Lookup lookup, Class<?> owner, String name,
                Class<?> returnType, Class<?>... parameters) throws ReflectiveOperationException {
            MethodHandle handle = lookup.findVirtual(owner, name, MethodType.methodType(returnType, parameters));
            return handle.asType(handle.type().changeParameterType(0, Object.class));
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
        public void setContentType(Object response, String type) {
            try {
                setContentType.invokeExact(response, type);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public void setContentLength(Object response, int length) {
            try {
                setContentLength.invokeExact(response, length);
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
