package dev.ratelimit.instrument;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The agent's options: {@code -javaagent:rate-limit-agent.jar=OPTIONS}, a comma-separated list of
 * {@code name=value}; a bare value is the config path.
 */
final class AgentOptions {
    enum OnConfigError { EXIT, DISABLE }

    final String config;
    /** Whether the options name the rule file ({@link #config} is otherwise the default). */
    final boolean configNamed;
    final String log;
    final OnConfigError onConfigError;
    /** What was wrong with the options (the rest were read); empty when nothing was. */
    final List<String> errors;

    private AgentOptions(String config, boolean configNamed, String log, OnConfigError onConfigError,
            List<String> errors) {
        this.config = config;
        this.configNamed = configNamed;
        this.log = log;
        this.onConfigError = onConfigError;
        this.errors = List.copyOf(errors);
    }

    /**
     * Parses the option string. Every option is read, so that {@code on-config-error=disable}
     * holds whatever else is wrong; what is wrong is in {@link #errors}, and a wrong option keeps
     * its default.
     *
     * @param text the text after {@code =} in {@code -javaagent}, or {@code null}
     * @param configFromEnvironment the {@code RATELIMIT_CONFIG} variable, or {@code null}
     */
    static AgentOptions parse(String text, String configFromEnvironment) {
        String byDefault = configFromEnvironment == null || configFromEnvironment.isEmpty()
                ? "ratelimit.yaml" : configFromEnvironment;
        String config = byDefault;
        String log = "info";
        OnConfigError onConfigError = OnConfigError.EXIT;
        List<String> errors = new ArrayList<>();
        String configGiven = null;
        java.util.Set<String> seen = new java.util.HashSet<>();
        if (text != null && !text.isBlank()) {
            for (String option : text.split(",")) {
                String trimmed = option.trim();
                if (trimmed.isEmpty()) {
                    // a stray comma ("a.yaml,,log=warn", or an empty variable in a launch script's
                    // "config=$F,$EXTRA"): String.split already drops trailing ones; one in the
                    // middle or in front is no option either, not an empty second rule file
                    continue;
                }
                int eq = trimmed.indexOf('=');
                String name = eq < 0 ? "config" : trimmed.substring(0, eq).trim();
                String value = eq < 0 ? trimmed : trimmed.substring(eq + 1).trim();
                if (!name.equals("config") && !seen.add(name)) {
                    // silently last-wins, a later on-config-error=exit undid an earlier disable
                    errors.add("agent option " + name + " is given twice");
                    if (name.equals("on-config-error") && value.equalsIgnoreCase("disable")) {
                        onConfigError = OnConfigError.DISABLE; // disable holds wherever it is
                    }
                    continue;
                }
                switch (name) {
                    case "config":
                        if (configGiven != null) {
                            // the options are split at commas: a path holding one comes out as two
                            errors.add("agent options name two rule files ('" + configGiven + "' and '" + value
                                    + "'); a path with a comma in it can be given in RATELIMIT_CONFIG instead");
                        } else {
                            configGiven = value;
                            config = value;
                        }
                        break;
                    case "log":
                        if (value.toLowerCase(Locale.ROOT).matches("error|warn|info|debug")) {
                            log = value.toLowerCase(Locale.ROOT);
                        } else {
                            errors.add("agent option log=" + value + ": expected error, warn, info or debug");
                        }
                        break;
                    case "on-config-error":
                        // any case, as log's values: DISABLE must not stop the JVM it was meant to keep up
                        if (value.equalsIgnoreCase("exit")) {
                            onConfigError = OnConfigError.EXIT;
                        } else if (value.equalsIgnoreCase("disable")) {
                            onConfigError = OnConfigError.DISABLE;
                        } else {
                            errors.add("agent option on-config-error=" + value + ": expected exit or disable");
                        }
                        break;
                    default:
                        errors.add("unknown agent option '" + name + "': expected config, log or on-config-error");
                }
            }
        }
        if (config.isEmpty()) {
            errors.add("agent option config is empty");
            config = byDefault;
        }
        return new AgentOptions(config, configGiven != null, log, onConfigError, errors);
    }
}
