package dev.ratelimit.config;

import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One rule: what it applies to, what it counts by, and its limits.
 *
 * <p>A rule has an {@link #httpMatch()}, a {@link #methodPattern()}, or neither: then it is a named
 * rule that {@code @RateLimited} methods refer to. Two rules are {@link #equals equal} when they
 * behave the same, whatever their position in the file; a reload keeps the counters of rules
 * that are equal to their previous version.
 */
public final class RuleConfig {

    /**
     * What a Java identifier may hold, less its ignorable control characters (letters and digits of
     * any script, {@code _}, {@code $} and other connectors and currency signs; combining marks
     * after the first character):
     * an annotated method's default name {@code SimpleClassName#method} must always be a valid
     * rule name, whatever the class is called ({@code _Legacy}, {@code Überweisung}).
     */
    private static final String NAME_START = "\\p{L}\\p{N}\\p{Sc}\\p{Pc}";
    private static final Pattern NAME =
            Pattern.compile("[" + NAME_START + "][" + NAME_START + "\\p{Mn}\\p{Mc}.:#/-]{0,254}");

    private final String name;
    private final HttpMatch httpMatch;
    private final MethodPattern methodPattern;
    private final KeySpec key;
    private final List<LimitSpec> limits;
    private final Algorithm algorithm;
    private final Mode mode;
    private final OnReject onReject;
    private final boolean exempt;
    private final OnError onError;
    private final int line;
    private final int column;

    RuleConfig(String name, HttpMatch httpMatch, MethodPattern methodPattern, KeySpec key,
            List<LimitSpec> limits, Algorithm algorithm, Mode mode, OnReject onReject, boolean exempt,
            OnError onError, int line, int column) {
        checkName(name);
        if (httpMatch != null && methodPattern != null) {
            throw new IllegalArgumentException("a rule matches HTTP requests or methods, not both");
        }
        if (limits.isEmpty()) {
            throw new IllegalArgumentException("a rule needs at least one limit");
        }
        this.name = name;
        this.httpMatch = httpMatch;
        this.methodPattern = methodPattern;
        this.key = Objects.requireNonNull(key, "key");
        this.limits = List.copyOf(limits);
        this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
        this.mode = Objects.requireNonNull(mode, "mode");
        this.onReject = Objects.requireNonNull(onReject, "onReject");
        this.exempt = exempt;
        this.onError = Objects.requireNonNull(onError, "onError");
        this.line = line;
        this.column = column;
    }

    /**
     * A rule declared by {@code @RateLimited} attributes: fixed-window, enforcing, throwing, exempting
     * internal callers, doing what the store's {@code on-error} says when the store fails, and
     * matching nothing by itself.
     *
     * @throws IllegalArgumentException when the name is not a valid rule name or there are no limits
     */
    public static RuleConfig inline(String name, KeySpec key, List<LimitSpec> limits, OnError onError) {
        return new RuleConfig(name, null, null, key, limits, Algorithm.FIXED_WINDOW, Mode.ENFORCE,
                OnReject.THROW, true, onError, 0, 0);
    }

    /** This rule with {@code onError} for its on-error: what a reload of the store's default changes. */
    public RuleConfig withOnError(OnError onError) {
        return onError == this.onError ? this : new RuleConfig(name, httpMatch, methodPattern, key, limits, algorithm,
                mode, onReject, exempt, onError, line, column);
    }

    /**
     * Checks a rule name: 1 to 255 of letters, digits, {@code _ $} (what a Java identifier holds)
     * and {@code . : # / -}, starting with one of the first kind.
     *
     * @throws IllegalArgumentException with a message for the user
     */
    static void checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid rule name " + NodeReader.quoted(name) + ": expected 1 to 255 letters, digits"
                    + " or _ $ . : # / -, starting with a letter, a digit, _ or $");
        }
    }

    /** The rule's unique name, as it appears in headers, metrics and logs. */
    public String name() {
        return name;
    }

    /** The HTTP requests the rule applies to, or null. */
    public HttpMatch httpMatch() {
        return httpMatch;
    }

    /** The methods the rule applies to, or null. */
    public MethodPattern methodPattern() {
        return methodPattern;
    }

    /** What calls are counted by (default {@code global}). */
    public KeySpec key() {
        return key;
    }

    /** The limits, all enforced; at least one. */
    public List<LimitSpec> limits() {
        return limits;
    }

    /** How calls are counted (default fixed-window). */
    public Algorithm algorithm() {
        return algorithm;
    }

    /** Enforce or only report (default enforce). */
    public Mode mode() {
        return mode;
    }

    /** What a rejected method call gets (default throw). */
    public OnReject onReject() {
        return onReject;
    }

    /** True when internal tokens exempt callers from this rule (the default). */
    public boolean exempt() {
        return exempt;
    }

    /** What the rule does when its store cannot answer in time (default: the store's on-error). */
    public OnError onError() {
        return onError;
    }

    /** The 1-based line of the rule in its file; 0 for a rule not from a file. */
    public int line() {
        return line;
    }

    /** The 1-based column of the rule in its file; 0 for a rule not from a file. */
    public int column() {
        return column;
    }

    /**
     * One line for {@code check}:
     * {@code api-per-ip: http [GET, POST] /api/** by client-ip: 300 per 1m, fixed-window, enforce},
     * followed by whatever else differs from the defaults.
     */
    public String describe() {
        String target;
        if (httpMatch != null) {
            target = httpMatch.toString();
        } else if (methodPattern != null) {
            target = "method " + methodPattern;
        } else {
            target = "named";
        }
        StringBuilder text = new StringBuilder(name).append(": ").append(target)
                .append(" by ").append(key).append(": ")
                .append(limits.stream().map(LimitSpec::toString).collect(Collectors.joining(" and ")))
                .append(", ").append(algorithm.yamlName())
                .append(", ").append(mode.yamlName());
        if (onReject != OnReject.THROW) {
            text.append(", on-reject ").append(onReject.yamlName());
        }
        if (!exempt) {
            text.append(", counts internal callers");
        }
        if (onError != OnError.ALLOW) {
            text.append(", on-error ").append(onError.yamlName());
        }
        return text.toString();
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof RuleConfig)) {
            return false;
        }
        RuleConfig that = (RuleConfig) other;
        return exempt == that.exempt && name.equals(that.name)
                && Objects.equals(httpMatch, that.httpMatch) && Objects.equals(methodPattern, that.methodPattern)
                && key.equals(that.key) && limits.equals(that.limits) && algorithm == that.algorithm
                && mode == that.mode && onReject == that.onReject && onError == that.onError;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, httpMatch, methodPattern, key, limits, algorithm, mode, onReject, exempt, onError);
    }

    @Override
    public String toString() {
        return describe();
    }
}
