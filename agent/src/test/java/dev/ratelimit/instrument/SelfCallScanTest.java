package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The self-call scan as the README defines a self-call: "a method whose code calls a method of
 * its own name and descriptor", on any owner (a delegate's, an override's). A method reference
 * is such a call as much as the lambda {@code k -> next.visit(k)} is.
 */
class SelfCallScanTest {
    private static final ClassLoader LOADER = SelfCallScanTest.class.getClassLoader();

    private static Set<String> scan(Class<?> type) throws Exception {
        try (var in = LOADER.getResourceAsStream(type.getName().replace('.', '/') + ".class")) {
            return LimitedMethodTransformer.callingThemselves(in.readAllBytes());
        }
    }

    interface Visitor {
        void visit(Node n);
    }

    static final class Node {
        final List<Node> kids = new ArrayList<>();
    }

    @SuppressWarnings("unused")
    static final class Delegating implements Visitor {
        Visitor next;

        @Override
        public void visit(Node n) {
            n.kids.forEach(k -> next.visit(k)); // found: a call instruction in its own lambda
        }

        public void visitDirect(Node n) {
            for (Node k : n.kids) {
                next.visit(k);
            }
        }
    }

    @SuppressWarnings("unused")
    static final class DelegatingByReference implements Visitor {
        Visitor next;

        @Override
        public void visit(Node n) {
            n.kids.forEach(next::visit); // the same call, written as a method reference
        }
    }

    @Test
    void aMethodReferenceToAMethodOfItsOwnNameAndDescriptorOnAnotherOwnerIsASelfCallAsTheLambdaIs() throws Exception {
        String visit = "visit(L" + Node.class.getName().replace('.', '/') + ";)V";
        assertTrue(scan(Delegating.class).contains(visit), "the lambda form is found");
        assertTrue(scan(DelegatingByReference.class).contains(visit),
                "next::visit is the same call as k -> next.visit(k), and is not found: " + scan(DelegatingByReference.class));
    }

    interface Handler<T> {
        void handle(T t);
    }

    @SuppressWarnings("unused")
    static final class Composite implements Handler<Node> {
        final List<Handler<Node>> children = new ArrayList<>();

        @Override
        public void handle(Node n) {
            for (Handler<Node> child : children) {
                child.handle(n); // Handler.handle(Object): the bridge of this class, which calls handle(Node)
            }
        }
    }

    @SuppressWarnings("unused")
    static final class CompositeInLambda implements Handler<Node> {
        final List<Handler<Node>> children = new ArrayList<>();

        @Override
        public void handle(Node n) {
            children.forEach(child -> child.handle(n));
        }
    }

    @SuppressWarnings("unused")
    static final class GenericLeaf implements Handler<Node> {
        Handler<String> names;

        @Override
        public void handle(Node n) {
            names.handle("leaf"); // Handler.handle(Object) too: not told from a call through this class's bridge
        }

        void report(Node n) {
            names.handle("report"); // not report's own bridge, nor a call of report
        }
    }

    @Test
    void aCallThroughTheGenericTypeReachesTheMethodThroughItsBridge() throws Exception {
        String handle = "handle(L" + Node.class.getName().replace('.', '/') + ";)V";
        assertTrue(scan(Composite.class).contains(handle), () -> "not found: " + scanned(Composite.class));
        assertTrue(scan(CompositeInLambda.class).contains(handle), () -> "not found: " + scanned(CompositeInLambda.class));
        assertFalse(scan(GenericLeaf.class).contains("report(L" + Node.class.getName().replace('.', '/') + ";)V"));
        // a call of a Handler<String> from a Handler<Node>'s handle has the bridge's erased signature,
        // and the code cannot tell which the receiver is: taken for a self-call, as the README says
        assertTrue(scan(GenericLeaf.class).contains(handle), () -> scanned(GenericLeaf.class));
        assertFalse(scan(Composite.class).contains("handle(Ljava/lang/Object;)V"), "a bridge is never limited");
    }

    private static String scanned(Class<?> type) {
        try {
            return scan(type).toString();
        } catch (Exception e) {
            return e.toString();
        }
    }

    @SuppressWarnings("unused")
    record Point(int x, String name) {
        int x(int scale) {
            return x * scale;
        }

        String label() {
            return "p" + x + name + toString(); // string concatenation and ObjectMethods indy
        }
    }

    @SuppressWarnings("unused")
    static final class Overloads {
        final List<Node> kids = new ArrayList<>();

        void walk(Node n) {
            n.kids.forEach(k -> walk(k, 1)); // an overload: not a self-call
        }

        void walk(Node n, int depth) {
        }
    }

    @Test
    void recordsStringConcatenationAndOverloadsInLambdasAreNoSelfCalls() throws Exception {
        assertTrue(scan(Point.class).isEmpty(), () -> {
            try {
                return scan(Point.class).toString();
            } catch (Exception e) {
                return e.toString();
            }
        });
        String node = "L" + Node.class.getName().replace('.', '/') + ";";
        assertFalse(scan(Overloads.class).contains("walk(" + node + ")V"));
    }
}
