package dev.ratelimit.config;

/** What a limited method call gets when it is rejected. HTTP rules always answer 429. */
public enum OnReject {
    /** Throw {@code RateLimitExceededException}; the default. */
    THROW("throw"),
    /** Return the method's default value: null, 0, false, or an empty Optional or collection. */
    RETURN_DEFAULT("return-default");

    private final String yamlName;

    OnReject(String yamlName) {
        this.yamlName = yamlName;
    }

    /** The spelling used in the rule file. */
    public String yamlName() {
        return yamlName;
    }

    /** The constant spelled {@code text} in the rule file, or null when there is none. */
    public static OnReject fromYaml(String text) {
        for (OnReject value : values()) {
            if (value.yamlName.equals(text)) {
                return value;
            }
        }
        return null;
    }
}
