package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.CallScope;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.ThreadCalls;
import java.util.Arrays;

/**
 * The rules and keys of the limited calls one thread is inside, innermost last, for rules that
 * can nest (see {@link MethodSites}): a call under a rule and key already on the stack is part of
 * the call that counted it, and is not counted again. A call with another key is another call.
 *
 * <p>Only the owning thread touches it. Entering pushes what a call counted and hands out the
 * {@link CallScope} of the depth before; closing that scope truncates the stack back to it. So a
 * scope never closed (an exit advice that did not run) is mended by the next scope closed below it,
 * and one of an outermost call by the end of the request the thread is serving, which cuts the
 * stack back to the depth it began at (see {@link ThreadCalls}).
 *
 * <p>Rules are kept by their {@link ActiveRule#id() id}, not by reference: the stack lives as long
 * as its thread, usually in the old generation, where every reference written costs the
 * collector's write barrier (with a memory fence) on each call. A key is a reference, written
 * only when the rule has one, and cleared when the call ends, so no rule or key outlives its call.
 */
final class CallStack implements ThreadCalls {
    private int[] rules = new int[4];
    private String[] keys = new String[4];
    private int size;
    /** The scope of the outermost call, the common case; deeper ones are in {@link #deeper}. */
    private final Frame root = new Frame(this, 0);
    private Frame[] deeper = new Frame[4];

    /** Whether a call under {@code rule} counted against {@code key} is in progress on this thread. */
    boolean inside(ActiveRule rule, String key) {
        int id = rule.id();
        for (int i = 0; i < size; i++) {
            if (rules[i] == id && (key == null ? keys[i] == null : key.equals(keys[i]))) {
                return true;
            }
        }
        return false;
    }

    /** The depth now: what {@link #truncate} and {@link #scope} take. */
    @Override
    public int depth() {
        return size;
    }

    void push(ActiveRule rule, String key) {
        if (size == rules.length) {
            rules = Arrays.copyOf(rules, size * 2);
            keys = Arrays.copyOf(keys, size * 2);
        }
        rules[size] = rule.id();
        if (key != null) {
            keys[size] = key;
        }
        size++;
    }

    /** Drops what was pushed since {@code depth}, keeping no reference to it. */
    @Override
    public void truncate(int depth) {
        for (int i = depth; i < size; i++) {
            if (keys[i] != null) {
                keys[i] = null;
            }
        }
        if (depth < size) {
            size = depth;
        }
    }

    /** The scope that ends the calls pushed since {@code depth}; one object per depth, reused. */
    CallScope scope(int depth) {
        if (depth == 0) {
            return root;
        }
        if (depth >= deeper.length) {
            deeper = Arrays.copyOf(deeper, Math.max(depth + 1, deeper.length * 2));
        }
        Frame frame = deeper[depth];
        if (frame == null) {
            frame = new Frame(this, depth);
            deeper[depth] = frame;
        }
        return frame;
    }

    private static final class Frame extends CallScope {
        private final CallStack stack;
        private final int depth;

        Frame(CallStack stack, int depth) {
            this.stack = stack;
            this.depth = depth;
        }

        @Override
        public void close() {
            stack.truncate(depth);
        }
    }
}
