package dev.ratelimit.config;

/** How a rule counts calls within its window. */
public enum Algorithm {
    /** One counter per key and window, reset at each window boundary; the default. */
    FIXED_WINDOW("fixed-window"),
    /** The current window's count plus the previous window's, weighted by their overlap. */
    SLIDING_WINDOW("sliding-window"),
    /** A bucket of {@code limit} tokens refilled evenly over the window. */
    TOKEN_BUCKET("token-bucket");

    private final String yamlName;

    Algorithm(String yamlName) {
        this.yamlName = yamlName;
    }

    /** The spelling used in the rule file. */
    public String yamlName() {
        return yamlName;
    }

    /** The constant spelled {@code text} in the rule file, or null when there is none. */
    public static Algorithm fromYaml(String text) {
        for (Algorithm value : values()) {
            if (value.yamlName.equals(text)) {
                return value;
            }
        }
        return null;
    }
}
