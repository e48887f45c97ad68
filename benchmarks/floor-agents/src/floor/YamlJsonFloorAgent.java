package floor;

import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.util.Optional;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.nodes.Node;

/**
 * The YAML floor ({@link YamlFloorAgent}) with SnakeYAML Engine's default JSON schema instead of
 * the core schema the agent sets: the builder makes the JSON schema's resolver anyway, so this
 * shows what the second schema costs.
 */
public final class YamlJsonFloorAgent {
    private YamlJsonFloorAgent() {
    }

    public static void premain(String options, Instrumentation instrumentation) throws IOException {
        String path = RuleFile.path(options);
        String text = RuleFile.text(path);
        LoadSettings settings = LoadSettings.builder().setLabel(path).build();
        Optional<Node> root = new Compose(settings).composeString(text);
        if (root.isEmpty()) {
            System.err.println("yaml json floor agent: " + path + " is empty");
            System.exit(78);
        }
        AdviceFloorAgent.premain(options, instrumentation);
    }
}
