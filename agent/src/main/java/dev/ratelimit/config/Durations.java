package dev.ratelimit.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The rule file's durations: a positive whole number and one unit, {@code ms s m h d}. */
public final class Durations {

    /** Longer windows are almost certainly a typo, and keep counters alive for too long. */
    public static final Duration MAX = Duration.ofDays(366);

    private static final Pattern FORM = Pattern.compile("([0-9]{1,15})(ms|s|m|h|d)");
    private static final String EXPECTED =
            "expected a positive whole number and a unit: ms, s, m, h or d (500ms, 1s, 30s, 1m, 1h, 1d)";

    private Durations() {
    }

    /**
     * Parses {@code 500ms}, {@code 1s}, {@code 30s}, {@code 1m}, {@code 1h}, {@code 1d}.
     *
     * @throws IllegalArgumentException with a message for the user when {@code text} is not one
     *         of those forms, is zero, or is longer than {@link #MAX}
     */
    public static Duration parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("missing duration; " + EXPECTED);
        }
        Matcher matcher = FORM.matcher(text);
        if (!matcher.matches()) {
            throw new IllegalArgumentException("invalid duration " + NodeReader.quoted(text) + "; " + EXPECTED);
        }
        long amount = Long.parseLong(matcher.group(1));
        if (amount == 0) {
            throw new IllegalArgumentException("duration " + NodeReader.quoted(text) + " must be at least 1ms");
        }
        Duration duration = toDuration(amount, matcher.group(2));
        if (duration == null || duration.compareTo(MAX) > 0) {
            throw new IllegalArgumentException("duration " + NodeReader.quoted(text) + " is longer than the maximum of 366d");
        }
        return duration;
    }

    /** Null when the amount cannot be represented; {@link #MAX} bounds it long before that. */
    private static Duration toDuration(long amount, String unit) {
        long daysBound = MAX.toDays() + 1;
        switch (unit) {
            case "ms":
                return Duration.ofMillis(amount);
            case "s":
                return amount > daysBound * 86_400 ? null : Duration.ofSeconds(amount);
            case "m":
                return amount > daysBound * 1_440 ? null : Duration.ofMinutes(amount);
            case "h":
                return amount > daysBound * 24 ? null : Duration.ofHours(amount);
            default:
                return amount > daysBound ? null : Duration.ofDays(amount);
        }
    }

    /** The shortest rule-file form of {@code duration}: {@code 60s} is {@code 1m}, {@code 1500ms} stays. */
    public static String format(Duration duration) {
        if (duration.isNegative() || duration.getNano() % 1_000_000 != 0) {
            return duration.toString();
        }
        long millis = duration.toMillis();
        if (millis == 0 || millis % 1000 != 0) {
            return millis + "ms";
        }
        long seconds = millis / 1000;
        if (seconds % 86_400 == 0) {
            return seconds / 86_400 + "d";
        }
        if (seconds % 3600 == 0) {
            return seconds / 3600 + "h";
        }
        if (seconds % 60 == 0) {
            return seconds / 60 + "m";
        }
        return seconds + "s";
    }
}
