package floor;

import java.io.IOException;
import java.lang.instrument.Instrumentation;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.composer.Composer;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.parser.ParserImpl;
import org.yaml.snakeyaml.reader.StreamReader;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * The YAML floor ({@link YamlFloorAgent}) with SnakeYAML (the YAML 1.1 library, the other parser
 * the project's rules allow) in place of SnakeYAML Engine: it composes the rule file into nodes
 * with SnakeYAML's own composer and resolver.
 */
public final class SnakeYamlFloorAgent {
    private SnakeYamlFloorAgent() {
    }

    public static void premain(String options, Instrumentation instrumentation) throws IOException {
        String path = RuleFile.path(options);
        String text = RuleFile.text(path);
        LoaderOptions loaderOptions = new LoaderOptions();
        Node root = new Composer(new ParserImpl(new StreamReader(text), loaderOptions), new Resolver(), loaderOptions)
                .getSingleNode();
        if (root == null) {
            System.err.println("snakeyaml floor agent: " + path + " is empty");
            System.exit(78);
        }
        AdviceFloorAgent.premain(options, instrumentation);
    }
}
