package dev.ratelimit.instrument;

import java.util.Locale;

/**
 * The agent's options: {@code -javaagent:rate-limit-agent.jar=OPTIONS}, a comma-separated list of
 * {@code name=value}; a bare value is the config path.
 */
final class AgentOptions {
    enum OnConfigError { EXIT, DISABLE }

    final String config;
    final String log;
    final OnConfigError onConfigError;

    private AgentOptions(String config, String log, OnConfigError onConfigError) {
        this.config = config;
        this.log = log;
        this.onConfigError = onConfigError;
    }

    /**
     * Parses the option string.
     *
     * @param text the text after {@code =} in {@code -javaagent}, or {@code null}
     * @param configFromEnvironment the {@code RATELIMIT_CONFIG} variable, or {@code null}
     * @throws IllegalArgumentException for an unknown option or value
     */
    static AgentOptions parse(String text, String configFromEnvironment) {
        String config = configFromEnvironment == null || configFromEnvironment.isEmpty()
                ? "ratelimit.yaml" : configFromEnvironment;
        String log = "info";
        OnConfigError onConfigError = OnConfigError.EXIT;
        if (text != null && !text.isBlank()) {
            for (String option : text.split(",")) {
                String trimmed = option.trim();
                int eq = trimmed.indexOf('=');
                if (eq < 0) {
                    config = trimmed;
                    continue;
                }
                String name = trimmed.substring(0, eq).trim();
                String value = trimmed.substring(eq + 1).trim();
                switch (name) {
                    case "config":
                        config = value;
                        break;
                    case "log":
                        log = value.toLowerCase(Locale.ROOT);
                        if (!log.matches("error|warn|info|debug")) {
                            throw new IllegalArgumentException("agent option log=" + value
                                    + ": expected error, warn, info or debug");
                        }
                        break;
                    case "on-config-error":
                        if (value.equals("exit")) {
                            onConfigError = OnConfigError.EXIT;
                        } else if (value.equals("disable")) {
                            onConfigError = OnConfigError.DISABLE;
                        } else {
                            throw new IllegalArgumentException("agent option on-config-error=" + value
                                    + ": expected exit or disable");
                        }
                        break;
                    default:
                        throw new IllegalArgumentException("unknown agent option '" + name
                                + "': expected config, log or on-config-error");
                }
            }
        }
        if (config.isEmpty()) {
            throw new IllegalArgumentException("agent option config is empty");
        }
        return new AgentOptions(config, log, onConfigError);
    }
}
