package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.bootstrap.RateLimitBridge;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.Spliterator;
import java.util.stream.BaseStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The JDK types whose return-default is an empty one: the weave marks each by name, and the
 * bridge makes each by name; the two lists agree, and what the bridge makes is of the type, and
 * empty. They were null beyond the first twenty (the review of the thirty-eighth round): SPEC
 * promises an empty collection.
 */
class ReturnDefaultKindsTest {

    @ParameterizedTest
    @ValueSource(strings = {"java.util.ArrayList", "java.util.LinkedList", "java.util.HashSet",
        "java.util.LinkedHashSet", "java.util.TreeSet", "java.util.HashMap", "java.util.LinkedHashMap",
        "java.util.TreeMap", "java.util.ArrayDeque", "java.util.Queue", "java.util.Deque", "java.util.SortedSet",
        "java.util.NavigableSet", "java.util.SortedMap", "java.util.NavigableMap",
        "java.util.concurrent.ConcurrentMap", "java.util.concurrent.ConcurrentHashMap",
        "java.util.concurrent.CopyOnWriteArrayList", "java.util.Iterator", "java.util.stream.Stream",
        "java.util.PriorityQueue", "java.util.Vector", "java.util.Stack", "java.util.Hashtable",
        "java.util.Properties", "java.util.IdentityHashMap", "java.util.WeakHashMap",
        "java.util.concurrent.BlockingQueue", "java.util.concurrent.BlockingDeque",
        "java.util.concurrent.TransferQueue", "java.util.concurrent.LinkedBlockingQueue",
        "java.util.concurrent.LinkedBlockingDeque", "java.util.concurrent.LinkedTransferQueue",
        "java.util.concurrent.PriorityBlockingQueue", "java.util.concurrent.ConcurrentLinkedQueue",
        "java.util.concurrent.ConcurrentLinkedDeque", "java.util.concurrent.CopyOnWriteArraySet",
        "java.util.concurrent.ConcurrentNavigableMap", "java.util.concurrent.ConcurrentSkipListMap",
        "java.util.concurrent.ConcurrentSkipListSet", "java.util.ListIterator", "java.util.Enumeration",
        "java.util.Spliterator", "java.util.stream.IntStream", "java.util.stream.LongStream",
        "java.util.stream.DoubleStream", "java.util.SequencedCollection", "java.util.SequencedSet",
        "java.util.SequencedMap"})
    void anEmptyOneOfTheType(String name) throws ClassNotFoundException {
        assertEquals(RateLimitBridge.RETURNS_EMPTY_OF_TYPE, LimitedMethodTransformer.returnKind(name), name);
        Object empty = RateLimitBridge.defaultValue(RateLimitBridge.RETURNS_EMPTY_OF_TYPE, null, name);
        assertTrue(typeOrItsJava21Subtype(name).isInstance(empty), name + ": " + empty);
        if (empty instanceof Collection) {
            assertTrue(((Collection<?>) empty).isEmpty(), name);
        } else if (empty instanceof Map) {
            assertTrue(((Map<?, ?>) empty).isEmpty(), name);
        } else if (empty instanceof Iterator) {
            assertTrue(!((Iterator<?>) empty).hasNext(), name);
        } else if (empty instanceof java.util.Enumeration) {
            assertTrue(!((java.util.Enumeration<?>) empty).hasMoreElements(), name);
        } else if (empty instanceof Spliterator) {
            assertEquals(0, ((Spliterator<?>) empty).estimateSize(), name);
        } else {
            assertTrue(!((BaseStream<?, ?>) empty).iterator().hasNext(), name);
        }
        if (!typeOrItsJava21Subtype(name).isInterface()) {
            assertNotSame(empty, RateLimitBridge.defaultValue(RateLimitBridge.RETURNS_EMPTY_OF_TYPE, null, name),
                    name + ": a class's is new each time, which the caller may add to");
        }
    }

    /** Java 21's sequenced interfaces are named only, and what they get is a subtype of them there. */
    private static Class<?> typeOrItsJava21Subtype(String name) throws ClassNotFoundException {
        try {
            return Class.forName(name);
        } catch (ClassNotFoundException beforeJava21) {
            switch (name) {
                case "java.util.SequencedCollection": return List.class;
                case "java.util.SequencedSet": return NavigableSet.class;
                case "java.util.SequencedMap": return NavigableMap.class;
                default: throw beforeJava21;
            }
        }
    }

    /** Types without an empty one the agent can make: EnumSet needs its element type. */
    @ParameterizedTest
    @ValueSource(strings = {"java.util.EnumSet", "java.util.EnumMap", "java.util.concurrent.CompletableFuture",
        "com.google.common.collect.ImmutableList", "com.acme.Page"})
    void nullForAnyOtherType(String name) {
        assertEquals(RateLimitBridge.RETURNS_NULL, LimitedMethodTransformer.returnKind(name), name);
    }
}
