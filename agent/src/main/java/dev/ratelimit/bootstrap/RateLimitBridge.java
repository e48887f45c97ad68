package dev.ratelimit.bootstrap;

import java.lang.System.Logger.Level;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The static entry that advice inlined into application classes calls.
 *
 * <p>It holds a volatile reference to the runtime's {@link MethodGate} and never lets an error
 * of ours reach the application: anything thrown inside the agent lets the call through, is
 * counted in {@link #agentErrors()}, and is logged once per place and kind of error.
 */
public final class RateLimitBridge {

    /** Returned by a {@link MethodGate} to make the method return its type's default value. */
    public static final Object RETURN_DEFAULT = new Object() {
        @Override
        public String toString() {
            return "RETURN_DEFAULT";
        }
    };

    /** Returned by an {@link HttpGate} when it rejected the request and wrote the response. */
    public static final Object REJECTED = new Object() {
        @Override
        public String toString() {
            return "REJECTED";
        }
    };

    /** Return kinds, bound into exit advice at transform time. */
    public static final int RETURNS_NULL = 0;
    public static final int RETURNS_BOOLEAN = 1;
    public static final int RETURNS_BYTE = 2;
    public static final int RETURNS_SHORT = 3;
    public static final int RETURNS_CHAR = 4;
    public static final int RETURNS_INT = 5;
    public static final int RETURNS_LONG = 6;
    public static final int RETURNS_FLOAT = 7;
    public static final int RETURNS_DOUBLE = 8;
    public static final int RETURNS_OPTIONAL = 9;
    public static final int RETURNS_OPTIONAL_INT = 10;
    public static final int RETURNS_OPTIONAL_LONG = 11;
    public static final int RETURNS_OPTIONAL_DOUBLE = 12;
    public static final int RETURNS_LIST = 13;
    public static final int RETURNS_SET = 14;
    public static final int RETURNS_MAP = 15;
    /** An array: an empty one of the return type's component type. */
    public static final int RETURNS_ARRAY = 16;
    /** A concrete JDK collection or another collection interface, by name: see {@link #emptyOf}. */
    public static final int RETURNS_EMPTY_OF_TYPE = 17;

    private static final int MAX_LOGGED_KINDS = 256;
    private static final AtomicLong AGENT_ERRORS = new AtomicLong();
    private static final AtomicLong TRANSFORMATION_ERRORS = new AtomicLong();
    private static final Set<String> LOGGED = Collections.newSetFromMap(new ConcurrentHashMap<>());
    /** The rules and parts named by {@link #keyUnreadable}. */
    private static final Set<String> KEYS_WARNED = Collections.newSetFromMap(new ConcurrentHashMap<>());

    private static final AtomicBoolean CLAIMED = new AtomicBoolean();
    /** See {@link #startFailed}. */
    private static volatile String startFailure;
    /** The rule file of the installation holding the claim (absolute), or null. */
    private static volatile String installedConfig;

    private static volatile MethodGate methodGate;
    private static volatile HttpGate httpGate;
    private static volatile Consumer<Object> platformMBeanServerListener;

    private RateLimitBridge() {
    }

    /**
     * Called by method enter advice: {@code null} or a {@link CallScope} means proceed (the advice
     * keeps the scope and hands it to {@link #exitMethod} when the call ends); anything else is a
     * rejection (see {@link MethodGate#enter}).
     */
    public static Object enterMethod(int site, Object[] arguments) {
        MethodGate gate = methodGate;
        if (gate == null) {
            return null;
        }
        try {
            return gate.enter(site, arguments);
        } catch (Throwable t) {
            agentError("limiting a method call", t);
            return null;
        }
    }

    /**
     * Called by method exit advice with what {@link #enterMethod} returned when it was a
     * {@link CallScope}: the call has ended, on return or on a throw.
     */
    public static void exitMethod(Object scope) {
        try {
            ((CallScope) scope).close();
        } catch (Throwable t) {
            agentError("ending a method call", t);
        }
    }

    /** Called by servlet enter advice; see {@link HttpGate#enter}. */
    public static Object enterRequest(Object request, Object response) {
        HttpGate gate = httpGate;
        if (gate == null || request == null || response == null) {
            return null;
        }
        try {
            return gate.enter(request, response);
        } catch (Throwable t) {
            agentError("limiting an HTTP request", t);
            return null;
        }
    }

    /** Called by servlet exit advice; see {@link HttpGate#exit}. */
    public static boolean exitRequest(Object request, Object response, Object facts, Throwable thrown) {
        HttpGate gate = httpGate;
        if (gate == null) {
            RequestContext.set(null);
            return false;
        }
        try {
            return gate.exit(request, response, facts, thrown);
        } catch (Throwable t) {
            RequestContext.set(null);
            agentError("finishing an HTTP request", t);
            return false;
        }
    }

    /**
     * What the exit advice of a method of {@code woven} throws for a rejection: the exception as
     * the method's caller's class loader knows it (see {@link OwnRejections}). Never throws: the advice is suppressed, and a throw
     * here would let the rejected call return as if it had run.
     */
    public static Throwable thrownIn(Class<?> woven, Throwable rejection) {
        if (!(rejection instanceof dev.ratelimit.RateLimitExceededException) || woven == null) {
            return rejection;
        }
        try {
            return OwnRejections.in(woven, (dev.ratelimit.RateLimitExceededException) rejection);
        } catch (Throwable t) {
            try {
                agentError("making the application's own RateLimitExceededException", t,
                        "the call was rejected with the agent's");
            } catch (Throwable logFailed) {
                // a failing logger must not make the rejected call return as if it had run
            }
            return rejection;
        }
    }

    /**
     * The value a method of {@code woven} returning {@code returnType} (its binary name, as
     * {@code Class.getName} gives it) and of the given return kind returns when a rule says
     * {@code return-default}. An array or a concrete collection was {@code null}, where the
     * specification promises an empty collection (the SPEC audit of the thirty-seventh round).
     * Never throws: a type that cannot be had counts an agent error, and the call returns null.
     */
    public static Object defaultValue(int kind, Class<?> woven, String returnType) {
        if (kind != RETURNS_ARRAY && kind != RETURNS_EMPTY_OF_TYPE) {
            return defaultValue(kind);
        }
        try {
            if (kind == RETURNS_ARRAY) {
                // one empty array per class and type, kept: a Class.forName per rejection made a
                // rejected call 15 times slower (the review of the thirty-seventh round's commits),
                // and rejections come when the host is loaded. An empty array cannot be changed.
                java.util.Map<String, Object> arrays = EMPTY_ARRAYS.get(woven == null ? Object.class : woven);
                Object empty = arrays.get(returnType);
                if (empty == null) {
                    ClassLoader loader = woven == null ? null : woven.getClassLoader();
                    empty = java.lang.reflect.Array.newInstance(Class.forName(returnType, false, loader).getComponentType(), 0);
                    arrays.put(returnType, empty);
                }
                return empty;
            }
            return emptyOf(returnType);
        } catch (Throwable t) {
            agentError("making the default value of a rejected call", t, "the rejected call returned null");
            return null;
        }
    }

    /** The empty arrays {@link #defaultValue} gave the methods of a class, by return type. */
    private static final ClassValue<java.util.Map<String, Object>> EMPTY_ARRAYS = new ClassValue<>() {
        @Override
        protected java.util.Map<String, Object> computeValue(Class<?> type) {
            return new java.util.concurrent.ConcurrentHashMap<>(4);
        }
    };

    /**
     * A new empty collection of a concrete JDK class a method returns (the caller may add to it),
     * or an empty one of a collection, iterator or stream interface; null for any other type. The names are
     * those {@code LimitedMethodTransformer.returnKind} marks {@link #RETURNS_EMPTY_OF_TYPE}.
     */
    static Object emptyOf(String type) {
        switch (type) {
            case "java.util.ArrayList": return new java.util.ArrayList<>();
            case "java.util.LinkedList": return new java.util.LinkedList<>();
            case "java.util.HashSet": return new java.util.HashSet<>();
            case "java.util.LinkedHashSet": return new java.util.LinkedHashSet<>();
            case "java.util.TreeSet": return new java.util.TreeSet<>();
            case "java.util.HashMap": return new java.util.HashMap<>();
            case "java.util.LinkedHashMap": return new java.util.LinkedHashMap<>();
            case "java.util.TreeMap": return new java.util.TreeMap<>();
            case "java.util.ArrayDeque":
            case "java.util.Queue":
            case "java.util.Deque":
                return new java.util.ArrayDeque<>();
            case "java.util.SortedSet":
            case "java.util.NavigableSet":
                return java.util.Collections.emptyNavigableSet();
            case "java.util.SortedMap":
            case "java.util.NavigableMap":
                return java.util.Collections.emptyNavigableMap();
            case "java.util.concurrent.ConcurrentMap":
            case "java.util.concurrent.ConcurrentHashMap":
                return new java.util.concurrent.ConcurrentHashMap<>();
            case "java.util.concurrent.CopyOnWriteArrayList": return new java.util.concurrent.CopyOnWriteArrayList<>();
            case "java.util.Iterator": return java.util.Collections.emptyIterator();
            case "java.util.stream.Stream": return java.util.stream.Stream.empty();
            case "java.util.PriorityQueue": return new java.util.PriorityQueue<>();
            case "java.util.Vector": return new java.util.Vector<>();
            case "java.util.Stack": return new java.util.Stack<>();
            case "java.util.Hashtable": return new java.util.Hashtable<>();
            case "java.util.Properties": return new java.util.Properties();
            case "java.util.IdentityHashMap": return new java.util.IdentityHashMap<>();
            case "java.util.WeakHashMap": return new java.util.WeakHashMap<>();
            case "java.util.concurrent.BlockingQueue":
            case "java.util.concurrent.BlockingDeque":
            case "java.util.concurrent.LinkedBlockingDeque":
                return new java.util.concurrent.LinkedBlockingDeque<>();
            case "java.util.concurrent.LinkedBlockingQueue": return new java.util.concurrent.LinkedBlockingQueue<>();
            case "java.util.concurrent.TransferQueue":
            case "java.util.concurrent.LinkedTransferQueue":
                return new java.util.concurrent.LinkedTransferQueue<>();
            case "java.util.concurrent.PriorityBlockingQueue": return new java.util.concurrent.PriorityBlockingQueue<>();
            case "java.util.concurrent.ConcurrentLinkedQueue": return new java.util.concurrent.ConcurrentLinkedQueue<>();
            case "java.util.concurrent.ConcurrentLinkedDeque": return new java.util.concurrent.ConcurrentLinkedDeque<>();
            case "java.util.concurrent.CopyOnWriteArraySet": return new java.util.concurrent.CopyOnWriteArraySet<>();
            case "java.util.concurrent.ConcurrentNavigableMap":
            case "java.util.concurrent.ConcurrentSkipListMap":
                return new java.util.concurrent.ConcurrentSkipListMap<>();
            case "java.util.concurrent.ConcurrentSkipListSet": return new java.util.concurrent.ConcurrentSkipListSet<>();
            // Java 21's interfaces, named only: List, NavigableSet and NavigableMap extend them there
            case "java.util.SequencedCollection": return List.of();
            case "java.util.SequencedSet": return java.util.Collections.emptyNavigableSet();
            case "java.util.SequencedMap": return java.util.Collections.emptyNavigableMap();
            case "java.util.ListIterator": return java.util.Collections.emptyListIterator();
            case "java.util.Enumeration": return java.util.Collections.emptyEnumeration();
            case "java.util.Spliterator": return java.util.Spliterators.emptySpliterator();
            case "java.util.stream.IntStream": return java.util.stream.IntStream.empty();
            case "java.util.stream.LongStream": return java.util.stream.LongStream.empty();
            case "java.util.stream.DoubleStream": return java.util.stream.DoubleStream.empty();
            default: return null;
        }
    }

    /** The value a method of the given return kind returns when a rule says {@code return-default}. */
    public static Object defaultValue(int kind) {
        switch (kind) {
            case RETURNS_BOOLEAN: return Boolean.FALSE;
            case RETURNS_BYTE: return (byte) 0;
            case RETURNS_SHORT: return (short) 0;
            case RETURNS_CHAR: return (char) 0;
            case RETURNS_INT: return 0;
            case RETURNS_LONG: return 0L;
            case RETURNS_FLOAT: return 0f;
            case RETURNS_DOUBLE: return 0d;
            case RETURNS_OPTIONAL: return Optional.empty();
            case RETURNS_OPTIONAL_INT: return OptionalInt.empty();
            case RETURNS_OPTIONAL_LONG: return OptionalLong.empty();
            case RETURNS_OPTIONAL_DOUBLE: return OptionalDouble.empty();
            case RETURNS_LIST: return List.of();
            case RETURNS_SET: return Set.of();
            case RETURNS_MAP: return Map.of();
            default: return null;
        }
    }

    /** The exception handler of suppressed advice: an error in inlined advice code. */
    public static void adviceError(Throwable t) {
        agentError("advice", t);
    }

    /**
     * Counts an error inside the agent on a call's path and logs it the first time this place
     * and kind of error is seen. The call that hit it proceeds.
     */
    public static void agentError(String where, Throwable t) {
        agentError(where, t, "the call was let through");
    }

    /**
     * {@link #agentError(String, Throwable)} for an error that did not let a call through,
     * saying what came of it instead: a 429 that could not be written leaves the request rejected,
     * rather than run the application for a client over its limit; an error off any call's path
     * (watching the rule file, applying a reload, the MBeans) says what stays in force.
     */
    public static void agentError(String where, Throwable t, String outcome) {
        AGENT_ERRORS.incrementAndGet();
        String kind = where + ':' + t.getClass().getName();
        if (LOGGED.size() < MAX_LOGGED_KINDS && LOGGED.add(kind)) {
            System.getLogger("dev.ratelimit").log(Level.ERROR,
                    "rate-limit-agent: internal error while " + where
                            + "; " + outcome + " (logged once, counted in agent errors)", t);
        }
    }

    /**
     * A rule whose key cannot be read from a call's arguments for a reason {@code why} names in full
     * (the argument's class has no such property, say): a mismatch between the rule and the code,
     * not a fault of the agent's, so it is logged as a warning naming the rule, without a stack
     * trace, once per rule and {@code part} (what cannot be read, without the argument's class:
     * a parameter of an interface type may see a class per call), in a bounded set of its own, so
     * that these cannot use up the internal errors' lines. The call was let through that rule,
     * and is counted among the agent's errors as any call a rule could not decide.
     */
    public static void keyUnreadable(String rule, String part, String why) {
        AGENT_ERRORS.incrementAndGet();
        if (KEYS_WARNED.size() < MAX_LOGGED_KINDS && KEYS_WARNED.add(rule + ':' + part)) {
            System.getLogger("dev.ratelimit").log(Level.WARNING,
                    "rate-limit-agent: rule '" + rule + "' could not read its key: " + why
                            + "; the call was let through that rule (logged once, counted in agent errors)");
        }
    }

    /**
     * Errors inside the agent since start-up: each on a call's path let its call through, save a
     * 429 that could not be written; the others (watching, reloading, the MBeans) each left the
     * agent running with what was in force.
     */
    public static long agentErrors() {
        return AGENT_ERRORS.get();
    }

    /** Counts a class the agent failed to instrument (it runs unchanged, without limits). */
    public static void transformationError() {
        TRANSFORMATION_ERRORS.incrementAndGet();
    }

    /** Classes the agent failed to instrument since start-up. */
    public static long transformationErrors() {
        return TRANSFORMATION_ERRORS.get();
    }

    /**
     * Claims this JVM for one installation of the agent. The bridge lives on the bootstrap class
     * path, so the claim holds across every copy of the runtime: attaching a second time (which
     * opens a new runtime class loader) finds it taken and instruments nothing twice.
     *
     * @return whether this caller is the first
     */
    public static boolean claimInstallation() {
        return CLAIMED.compareAndSet(false, true);
    }

    /**
     * Records that the installation holding the claim failed to start, and why: the application
     * runs without limits, and a later attach says so and fails, rather than answer that the
     * agent is installed.
     */
    public static void startFailed(String why) {
        if (CLAIMED.get()) {
            startFailure = why;
        }
    }

    /** Why the installation holding the claim failed to start, or null. */
    public static String startFailure() {
        return startFailure;
    }

    /**
     * Gives up a claim whose installation stopped before it changed anything (an attach refused
     * for an invalid rule file, say), so that a later attach can install the agent.
     */
    public static void releaseInstallation() {
        installedConfig = null;
        CLAIMED.set(false);
    }

    /**
     * Records the rule file of the installation holding the claim, so that a later attach naming
     * another file can say which one is in force instead of answering that nothing changed.
     */
    public static void installedConfig(String absolutePath) {
        if (CLAIMED.get()) {
            installedConfig = absolutePath;
        }
    }

    /** The rule file of the installation holding the claim (absolute), or null before it is known. */
    public static String installedConfig() {
        return installedConfig;
    }

    /**
     * Called by the exit advice of {@code ManagementFactory.getPlatformMBeanServer}: hands the
     * platform MBean server to the runtime, which registers the agent's MBeans on it the first
     * time. The agent never builds that server itself at start-up (see {@code JmxRegistry}).
     */
    public static void platformMBeanServer(Object server) {
        Consumer<Object> listener = platformMBeanServerListener;
        if (listener == null || server == null) {
            return;
        }
        try {
            listener.accept(server);
        } catch (Throwable t) {
            agentError("registering the MBeans", t, "the agent runs on without its MBeans");
        }
    }

    /** Who receives the platform MBean server from {@link #platformMBeanServer}; null for nobody. */
    public static void onPlatformMBeanServer(Consumer<Object> listener) {
        platformMBeanServerListener = listener;
    }

    /** Installs the runtime's decisions for instrumented methods and servlet requests. */
    public static void install(MethodGate methods, HttpGate requests) {
        methodGate = methods;
        httpGate = requests;
    }
}
