package dev.ratelimit.config;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** What a rule counts by: one key part, or several joined into one counter key. */
public final class KeySpec {

    private static final KeySpec GLOBAL = of(List.of("global"));

    private final List<KeyPart> parts;

    private KeySpec(List<KeyPart> parts) {
        this.parts = List.copyOf(parts);
    }

    /** One counter for every caller; the default key. */
    public static KeySpec global() {
        return GLOBAL;
    }

    /**
     * Parses one key, or several separated by commas ({@code client-ip, header:X-Tenant}), as the
     * annotation's {@code key} attribute gives them.
     *
     * @throws IllegalArgumentException with a message for the user
     */
    public static KeySpec parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("the key is empty; expected global, client-ip, principal, "
                    + "header:NAME, argN or argN.property");
        }
        List<String> parts = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            parts.add(part.trim());
        }
        return of(parts);
    }

    /**
     * The key made of {@code parts}, each as {@link KeyPart#parse} takes it.
     *
     * @throws IllegalArgumentException with a message for the user
     */
    public static KeySpec of(List<String> parts) {
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("the key list is empty; give at least one key");
        }
        List<KeyPart> parsed = new ArrayList<>();
        Set<KeyPart> seen = new HashSet<>();
        for (String text : parts) {
            KeyPart part = KeyPart.parse(text);
            if (!seen.add(part)) {
                throw new IllegalArgumentException("key " + NodeReader.quoted(part.toString()) + " is listed twice");
            }
            parsed.add(part);
        }
        if (parsed.size() > 1 && has(parsed, KeyPart.Kind.GLOBAL)) {
            throw new IllegalArgumentException("'global' counts every caller together, so it cannot be combined "
                    + "with other keys");
        }
        return new KeySpec(parsed);
    }

    /** The parts, in the order they are joined. */
    public List<KeyPart> parts() {
        return parts;
    }

    /** True when some part reads a method argument. */
    public boolean usesArguments() {
        return has(parts, KeyPart.Kind.ARGUMENT);
    }

    /** How many parameters a method needs for every argument the key names: the highest index plus one. */
    public int argumentsNeeded() {
        int needed = 0;
        for (KeyPart part : parts) {
            if (part.kind() == KeyPart.Kind.ARGUMENT) {
                needed = Math.max(needed, part.argumentIndex() + 1);
            }
        }
        return needed;
    }

    /** True when some part reads the current HTTP request: client-ip, principal or a header. */
    public boolean usesRequest() {
        return has(parts, KeyPart.Kind.CLIENT_IP) || has(parts, KeyPart.Kind.PRINCIPAL)
                || has(parts, KeyPart.Kind.HEADER);
    }

    // a loop, not a stream: rule files are read in premain, where a JVM's first streams and
    // lambdas cost class loading and linking on main
    private static boolean has(List<KeyPart> parts, KeyPart.Kind kind) {
        for (KeyPart part : parts) {
            if (part.kind() == kind) {
                return true;
            }
        }
        return false;
    }

    /** True for exactly {@code global}: one counter for every caller. */
    public boolean isGlobal() {
        return parts.size() == 1 && parts.get(0).kind() == KeyPart.Kind.GLOBAL;
    }

    @Override
    public boolean equals(Object other) {
        return this == other || (other instanceof KeySpec && parts.equals(((KeySpec) other).parts));
    }

    @Override
    public int hashCode() {
        return parts.hashCode();
    }

    /** {@code client-ip} for one part, {@code [client-ip, header:X-Tenant]} for several. */
    @Override
    public String toString() {
        return parts.size() == 1 ? parts.get(0).toString() : parts.toString();
    }
}
