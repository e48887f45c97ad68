package floor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** The rule file the YAML floors read: named by the agent options ({@code config=PATH}). */
final class RuleFile {
    private RuleFile() {
    }

    static String path(String options) {
        return options == null ? "" : options.replaceFirst("^config=", "");
    }

    static String text(String path) throws IOException {
        return new String(Files.readAllBytes(Path.of(path)), StandardCharsets.UTF_8);
    }
}
