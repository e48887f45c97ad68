package dev.ratelimit.config;

import java.util.List;
import java.util.stream.Collectors;

/** A rule file that cannot be used; carries every problem found, not just the first. */
public final class ConfigException extends Exception {

    private static final long serialVersionUID = 1L;

    private final transient List<ConfigError> errors;

    /** "1 error" or "N errors", for the lines and metrics that count them. */
    public static String count(int errors) {
        return errors == 1 ? "1 error" : errors + " errors";
    }

    /** @param errors at least one error */
    public ConfigException(List<ConfigError> errors) {
        super(errors.stream().map(ConfigError::format).collect(Collectors.joining("\n")));
        if (errors.isEmpty()) {
            throw new IllegalArgumentException("a ConfigException needs at least one error");
        }
        this.errors = List.copyOf(errors);
    }

    /** Every problem found, in file order. */
    public List<ConfigError> errors() {
        return errors;
    }
}
