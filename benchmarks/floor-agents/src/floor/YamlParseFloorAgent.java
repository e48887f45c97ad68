package floor;

import java.io.IOException;
import java.lang.instrument.Instrumentation;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Parse;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * The YAML floor ({@link YamlFloorAgent}) with SnakeYAML Engine's event parser in place of its
 * composer: it reads the rule file's events and builds no nodes. It shows what composing the nodes
 * adds to the time before {@code main}.
 */
public final class YamlParseFloorAgent {
    private YamlParseFloorAgent() {
    }

    public static void premain(String options, Instrumentation instrumentation) throws IOException {
        String path = RuleFile.path(options);
        String text = RuleFile.text(path);
        LoadSettings settings = LoadSettings.builder().setLabel(path).setSchema(new CoreSchema()).build();
        int events = 0;
        for (Event event : new Parse(settings).parseString(text)) {
            events++;
        }
        if (events <= 2) {
            System.err.println("yaml parse floor agent: " + path + " is empty");
            System.exit(78);
        }
        AdviceFloorAgent.premain(options, instrumentation);
    }
}
