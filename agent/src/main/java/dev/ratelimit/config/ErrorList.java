package dev.ratelimit.config;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.Node;

/** The errors found in one rule file, collected so that the user sees all of them at once. */
final class ErrorList {

    private final String file;
    private final List<ConfigError> errors = new ArrayList<>();

    ErrorList(String file) {
        this.file = file;
    }

    /** An error at {@code node}'s position. */
    void add(Node node, String message) {
        add(node.getStartMark().orElse(null), message);
    }

    /** An error at {@code mark}, or at the file's start (1:1) when {@code mark} is null. */
    void add(Mark mark, String message) {
        if (mark == null) {
            errors.add(new ConfigError(file, 1, 1, message));
        } else {
            errors.add(new ConfigError(file, mark.getLine() + 1, mark.getColumn() + 1, message));
        }
    }

    boolean isEmpty() {
        return errors.isEmpty();
    }

    int size() {
        return errors.size();
    }

    /** Throws every error collected so far, in file order, if there is any. */
    void throwIfAny() throws ConfigException {
        if (!errors.isEmpty()) {
            List<ConfigError> sorted = new ArrayList<>(errors);
            sorted.sort(Comparator.comparingInt(ConfigError::line).thenComparingInt(ConfigError::column));
            throw new ConfigException(sorted);
        }
    }
}
