package dev.ratelimit.cli;

import dev.ratelimit.config.ConfigError;
import dev.ratelimit.config.ConfigException;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.config.RuleSet;
import java.io.PrintStream;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * {@code check FILE}: validates a rule file and prints it as the agent understands it, or prints
 * every error as {@code FILE:LINE:COLUMN: message}. Token values are never printed, only where
 * each token comes from.
 */
public final class CheckCommand {

    private CheckCommand() {
    }

    /**
     * @return 0 when the file is valid, 1 when it is not
     */
    public static int run(String file, PrintStream out, PrintStream err) {
        RuleSet rules;
        try {
            rules = ConfigLoader.load(Path.of(file));
        } catch (ConfigException e) {
            for (ConfigError error : e.errors()) {
                err.println(error.format());
            }
            return 1;
        } catch (InvalidPathException e) {
            err.println(file + ": not a valid file path");
            return 1;
        } catch (RuntimeException e) {
            // A bug of ours; the exception's message could quote the file, so only its type is shown.
            err.println(file + ": internal error while checking the rule file (" + e.getClass().getName()
                    + "); please report it");
            return 1;
        }
        int count = rules.rules().size();
        out.println(file + ": OK (version " + rules.version() + ", " + RuleSet.count(count) + ")");
        out.println("exempt: " + rules.exempt());
        String headerWarning = rules.exempt().headerWarning();
        if (headerWarning != null) {
            err.println(file + ": warning: " + headerWarning);
        }
        out.println("client: " + rules.client());
        String trustEveryone = rules.client().trustEveryoneWarning();
        if (trustEveryone != null) {
            err.println(file + ": warning: " + trustEveryone);
        }
        out.println("store: " + rules.store());
        out.println("rules:" + (count == 0 ? " none" : ""));
        for (RuleConfig rule : rules.rules()) {
            out.println("  " + rule.describe());
        }
        for (RuleConfig rule : rules.rules()) {
            String hint = rule.methodPattern() == null ? null : rule.methodPattern().nestedClassHint();
            if (hint != null) {
                err.println(file + ": warning: rule '" + rule.name() + "' names " + rule.methodPattern()
                        + ": class names are binary names; " + hint);
            }
        }
        return 0;
    }
}
