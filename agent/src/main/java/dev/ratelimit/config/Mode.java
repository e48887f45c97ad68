package dev.ratelimit.config;

/** Whether a rule rejects calls over its limit or only reports them. */
public enum Mode {
    /** Reject calls over the limit; the default. */
    ENFORCE("enforce"),
    /** Count, log and report calls over the limit, but never reject one. */
    SHADOW("shadow");

    private final String yamlName;

    Mode(String yamlName) {
        this.yamlName = yamlName;
    }

    /** The spelling used in the rule file. */
    public String yamlName() {
        return yamlName;
    }

    /** The constant spelled {@code text} in the rule file, or null when there is none. */
    public static Mode fromYaml(String text) {
        for (Mode value : values()) {
            if (value.yamlName.equals(text)) {
                return value;
            }
        }
        return null;
    }
}
