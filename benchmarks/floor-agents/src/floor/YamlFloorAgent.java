package floor;

import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.util.Optional;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * The advice floor ({@link AdviceFloorAgent}) plus the one thing this agent must do before the
 * application's {@code main} and the floor does not: read the rule file. {@code premain} composes
 * the file named by the options ({@code config=PATH}) into YAML nodes with SnakeYAML Engine, as
 * the agent's {@code ConfigLoader} does, and stops the JVM if it is not YAML; it does not check
 * the rules themselves. Then it does what the advice floor does.
 */
public final class YamlFloorAgent {
    private YamlFloorAgent() {
    }

    public static void premain(String options, Instrumentation instrumentation) throws IOException {
        String path = RuleFile.path(options);
        String text = RuleFile.text(path);
        LoadSettings settings = LoadSettings.builder().setLabel(path).setSchema(new CoreSchema()).build();
        Optional<Node> root = new Compose(settings).composeString(text);
        if (root.isEmpty()) {
            System.err.println("yaml floor agent: " + path + " is empty");
            System.exit(78);
        }
        AdviceFloorAgent.premain(options, instrumentation);
    }
}
