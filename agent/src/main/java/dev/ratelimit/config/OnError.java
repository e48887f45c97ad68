package dev.ratelimit.config;

/** What a rule does when its store cannot answer in time. */
public enum OnError {
    /** Let the call through (fail-open); the default. */
    ALLOW("allow"),
    /** Reject the call as if the limit had been reached. */
    REJECT("reject");

    private final String yamlName;

    OnError(String yamlName) {
        this.yamlName = yamlName;
    }

    /** The spelling used in the rule file. */
    public String yamlName() {
        return yamlName;
    }

    /** The constant spelled {@code text} in the rule file, or null when there is none. */
    public static OnError fromYaml(String text) {
        for (OnError value : values()) {
            if (value.yamlName.equals(text)) {
                return value;
            }
        }
        return null;
    }
}
