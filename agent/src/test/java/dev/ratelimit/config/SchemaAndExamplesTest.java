package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import com.networknt.schema.path.NodePath;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.schema.CoreSchema;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * config/rules.schema.json and the rule-file loader must agree: the shipped rule files (the demo's
 * config/rules.yaml and config/examples/) pass both, every file under
 * src/test/resources/invalid-rule-files/ is refused by both, and a set of valid edge cases is
 * accepted by both. Runs from the agent module's directory, like the other tests.
 */
class SchemaAndExamplesTest {

    private static final Path CONFIG = Path.of("../config");
    private static final Path SCHEMA_FILE = CONFIG.resolve("rules.schema.json");
    private static final Path INVALID = Path.of("src/test/resources/invalid-rule-files");

    private static final Pattern ENV_REFERENCE = Pattern.compile("\\$\\{env:([A-Za-z_][A-Za-z0-9_]*)}");
    private static final Pattern HEADER = Pattern.compile("^# (loader-says|schema-at): ?(.*)$", Pattern.MULTILINE);

    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private static JsonNode schemaNode;
    private static Schema schema;

    @TempDir
    Path tempDir;

    @BeforeAll
    static void loadSchema() throws IOException {
        schemaNode = JSON.readTree(Files.readString(SCHEMA_FILE));
        schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(schemaNode);
    }

    // ---------------------------------------------------------------- the schema itself

    @Test
    void theSchemaIsAValidDraft202012Schema() {
        Schema metaSchema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
                .getSchema(SchemaLocation.of("https://json-schema.org/draft/2020-12/schema"));
        List<Error> errors = metaSchema.validate(schemaNode);
        assertTrue(errors.isEmpty(), () -> "rules.schema.json is not a valid schema: " + describe(errors));
        assertEquals("https://json-schema.org/draft/2020-12/schema", schemaNode.get("$schema").asString());
    }

    /** Editors show descriptions; the loader refuses unknown keys, so the schema must too. */
    @Test
    void everyPropertyHasADescriptionAndEveryObjectIsClosed() {
        List<String> problems = new ArrayList<>();
        checkStructure(schemaNode, "#", problems);
        assertTrue(problems.isEmpty(), () -> String.join("\n", problems));
    }

    private static void checkStructure(JsonNode node, String where, List<String> problems) {
        if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                checkStructure(node.get(i), where + "/" + i, problems);
            }
            return;
        }
        if (!node.isObject()) {
            return;
        }
        JsonNode properties = node.get("properties");
        boolean isSchemaWithProperties = properties != null && properties.isObject();
        if (isSchemaWithProperties && node.has("type")) {
            JsonNode additional = node.get("additionalProperties");
            if (additional == null || !additional.isBoolean() || additional.asBoolean()) {
                problems.add(where + ": additionalProperties must be false");
            }
            for (String name : properties.propertyNames()) {
                JsonNode property = properties.get(name);
                if (!property.has("description") || property.get("description").asString().isBlank()) {
                    problems.add(where + "/properties/" + name + ": no description");
                }
            }
        }
        for (String name : node.propertyNames()) {
            checkStructure(node.get(name), where + "/" + name, problems);
        }
    }

    // ---------------------------------------------------------------- shipped files

    static Stream<Path> shippedRuleFiles() throws IOException {
        List<Path> files = new ArrayList<>();
        files.add(CONFIG.resolve("rules.yaml"));
        try (Stream<Path> examples = Files.list(CONFIG.resolve("examples"))) {
            examples.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(files::add);
        }
        return files.stream();
    }

    @Test
    void theExamplesAreAllThere() throws IOException {
        List<String> names = shippedRuleFiles().map(p -> p.getFileName().toString()).collect(Collectors.toList());
        assertTrue(names.containsAll(List.of("rules.yaml", "api-behind-load-balancer.yaml",
                "internal-service-exemption.yaml", "per-user-method-limits.yaml", "redis-shared-limits.yaml")),
                names::toString);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shippedRuleFiles")
    void aShippedFileLoads(Path file) throws Exception {
        String text = Files.readString(file);
        RuleSet rules = ConfigLoader.load(file, environmentFor(text));
        assertFalse(rules.rules().isEmpty(), file + " has no rules");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shippedRuleFiles")
    void aShippedFileValidatesAgainstTheSchema(Path file) throws IOException {
        List<Error> errors = validate(Files.readString(file));
        assertTrue(errors.isEmpty(), () -> file + " does not validate: " + describe(errors));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shippedRuleFiles")
    void aShippedFileNamesTheSchemaAndKeepsNoTokenInIt(Path file) throws IOException {
        String text = Files.readString(file);
        String schemaPath = file.getParent().getFileName().toString().equals("examples")
                ? "../rules.schema.json" : "rules.schema.json";
        assertTrue(text.startsWith("# yaml-language-server: $schema=" + schemaPath + "\n"),
                file + " must start with its yaml-language-server $schema line");
        Map<String, Object> document = loadYaml(text);
        @SuppressWarnings("unchecked")
        Map<String, Object> exempt = (Map<String, Object>) document.get("exempt");
        if (exempt != null) {
            for (Object token : (List<?>) exempt.get("tokens")) {
                assertTrue(String.valueOf(token).matches("\\$\\{(env|file):.+}"),
                        file + ": example tokens come from ${env:...} or ${file:...}, never literals");
            }
        }
    }

    // ---------------------------------------------------------------- invalid files

    static Stream<Arguments> invalidRuleFiles() throws IOException {
        try (Stream<Path> files = Files.list(INVALID)) {
            return files.filter(p -> p.toString().endsWith(".yaml"))
                    .sorted()
                    .map(p -> Arguments.of(p.getFileName().toString(), p))
                    .collect(Collectors.toList())
                    .stream();
        }
    }

    @Test
    void thereAreEnoughInvalidCases() throws IOException {
        assertTrue(invalidRuleFiles().count() >= 15);
    }

    /**
     * Each file says in its header what the loader says about it ({@code # loader-says:}) and where
     * the schema finds a problem ({@code # schema-at:}, a JSON pointer): both must refuse the file,
     * and for the reason the file was written for, not because of some other slip.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidRuleFiles")
    void anInvalidFileIsRefusedByTheLoaderAndTheSchema(String name, Path file) throws IOException {
        String text = Files.readString(file);
        Map<String, String> header = new HashMap<>();
        Matcher matcher = HEADER.matcher(text);
        while (matcher.find()) {
            header.put(matcher.group(1), matcher.group(2).trim());
        }
        assertTrue(header.containsKey("loader-says") && header.containsKey("schema-at"),
                name + " needs '# loader-says:' and '# schema-at:' header lines");

        ConfigException refused = assertThrows(ConfigException.class,
                () -> ConfigLoader.load(file, environmentFor(text)), name + " was accepted by the loader");
        String messages = refused.errors().stream().map(ConfigError::message).collect(Collectors.joining("\n"));
        assertTrue(messages.contains(header.get("loader-says")),
                () -> name + ": expected the loader to say '" + header.get("loader-says") + "', it said:\n" + messages);

        List<Error> errors = validate(text);
        assertFalse(errors.isEmpty(), name + " was accepted by the schema");
        String at = header.get("schema-at");
        assertTrue(errors.stream().anyMatch(e -> pointer(e.getInstanceLocation()).equals(at)),
                () -> name + ": expected a schema error at '" + at + "', got: " + describe(errors));
    }

    // ---------------------------------------------------------------- valid edge cases

    static Stream<Arguments> validEdgeCases() {
        return Stream.of(
                Arguments.of("only the version", "version: 1\n"),
                Arguments.of("no rules", "version: 1\nrules:\n"),
                Arguments.of("an empty rule list", "version: 1\nrules: []\n"),
                Arguments.of("the smallest limit and window", rule("limit: 1\n    window: 1ms\n")),
                Arguments.of("the longest window", rule("limit: 9223372036854775807\n    window: 366d\n")),
                Arguments.of("the longest window in each unit",
                        rule("limits:\n      - {limit: 1, window: 8784h}\n      - {limit: 2, window: 527039m}\n"
                                + "      - {limit: 3, window: 31622399s}\n      - {limit: 4, window: 31622398999ms}\n")),
                Arguments.of("a rule with only a name and a limit",
                        "version: 1\nrules:\n  - name: report-export\n    limit: 10\n    window: 1h\n"),
                Arguments.of("every character a rule name may have",
                        "version: 1\nrules:\n  - name: \"Report.Service_v2:export#run$1/a-b\"\n"
                                + "    limit: 10\n    window: 1h\n"),
                Arguments.of("rule names with the characters of Java class names",
                        "version: 1\nrules:\n  - {name: _Legacy#send, limit: 1, window: 1s}\n"
                                + "  - {name: \"$Proxy12#invoke\", limit: 1, window: 1s}\n"
                                + "  - {name: " + "n".repeat(255) + ", limit: 1, window: 1s}\n"),
                Arguments.of("a number as a rule name", "version: 1\nrules:\n  - name: 404\n    limit: 10\n    window: 1h\n"),
                Arguments.of("every key kind on a method rule",
                        "version: 1\nrules:\n  - name: send\n    match:\n"
                                + "      method: com.example.Outer$Inner#send\n"
                                + "    key: [client-ip, principal, header:X-Tenant, arg0, arg254.a.b_c.$d]\n"
                                + "    limit: 5\n    window: 1s\n    on-reject: return-default\n"),
                Arguments.of("keys joined in one string",
                        "version: 1\nrules:\n  - name: search\n    match:\n      http:\n        path: /search\n"
                                + "    key: \"client-ip, header:X-Tenant\"\n    limit: 5\n    window: 1s\n"),
                Arguments.of("method wildcards",
                        "version: 1\nrules:\n"
                                + "  - {name: a, match: {method: \"**.ReportService#build\"}, limit: 1, window: 1s}\n"
                                + "  - {name: b, match: {method: \"com.acme.*.Repo*#find*\"}, limit: 1, window: 1s}\n"
                                + "  - {name: c, match: {method: \"com.acme.**#*\"}, limit: 1, window: 1s}\n"
                                + "  - {name: d, match: {method: \"*Service#run\"}, limit: 1, window: 1s}\n"),
                Arguments.of("http paths and methods in both forms",
                        "version: 1\nrules:\n"
                                + "  - {name: a, match: {http: {path: /, methods: GET}}, limit: 1, window: 1s}\n"
                                + "  - {name: b, match: {http: {path: [/files/*.txt, /api/**/items, /ünïcode, /files/a%3Bb%20c%3f%23%25%7B%7d],"
                                + " methods: [get, PATCH]}}, limit: 1, window: 1s}\n"),
                Arguments.of("address blocks of every form",
                        "version: 1\nclient:\n  trusted-proxies: [0.0.0.0/0, 127.0.0.1, 10.0.0.0/8, 192.168.1.0/24,"
                                + " \"::/0\", \"::1\", \"2001:db8::/32\", \"fe80::/10\", \"64:ff9b::/96\","
                                + " \"2001:DB8:0:0:0:0:0:1/128\", \"::1.2.3.4\", \"64:ff9b::1.2.3.4/128\", \"1:2:3:4:5:6:7::/112\"]\n"
                                + "  ipv6-prefix: 1\n"),
                Arguments.of("the longest IPv6 prefix", "version: 1\nclient:\n  ipv6-prefix: 128\n"),
                Arguments.of("every token form",
                        "version: 1\nexempt:\n  header: X-Internal-Token\n  tokens:\n"
                                + "    - ${env:RATELIMIT_INTERNAL_TOKEN}\n"
                                + "    - ${file:internal-token}\n"
                                + "    - sha256:5E884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8\n"
                                + "    - exactly16chars!!\n"),
                Arguments.of("the redis store with TLS, an env password and every setting",
                        "version: 1\nstore:\n  type: redis\n  max-keys: 1\n  on-error: reject\n  redis:\n"
                                + "    uri: rediss://default:${env:REDIS_PASSWORD}@cache.internal:6380/2\n"
                                + "    timeout: 1ms\n    key-prefix: \"\"\n"
                                + "rules:\n  - name: a\n    limit: 1\n    window: 1s\n    on-error: allow\n"
                                + "    algorithm: token-bucket\n    mode: shadow\n    exempt: false\n"),
                Arguments.of("redis uris of every accepted form",
                        "version: 1\nstore:\n  redis:\n    uri: redis://u:p:q%40x@1h:/\n"),
                Arguments.of("a redis uri with an IPv6 host, a port and the highest database digits",
                        "version: 1\nstore:\n  redis:\n    uri: \"redis://[::1]:65535/123456789\"\n"),
                Arguments.of("a redis uri with its host from the environment",
                        "version: 1\nstore:\n  redis:\n    uri: redis://:${env:REDIS_PASSWORD}@${env:CACHEHOST}:6379/0\n"),
                Arguments.of("the longest redis timeout, in days", "version: 1\nstore:\n  redis:\n"
                        + "    uri: redis://127.0.0.1\n    timeout: 24d\n"),
                Arguments.of("a redis timeout of 576h", "version: 1\nstore:\n  redis:\n    uri: redis://h\n    timeout: 576h\n"),
                Arguments.of("a redis timeout of 34560m", "version: 1\nstore:\n  redis:\n    uri: redis://h\n    timeout: 34560m\n"),
                Arguments.of("a redis timeout of 2073600s", "version: 1\nstore:\n  redis:\n    uri: redis://h\n    timeout: 2073600s\n"),
                Arguments.of("a redis timeout of 2073600000ms",
                        "version: 1\nstore:\n  redis:\n    uri: redis://h\n    timeout: 2073600000ms\n"),
                Arguments.of("a redis section kept while the store is local",
                        "version: 1\nstore:\n  type: local\n  redis:\n    uri: redis://127.0.0.1\n"));
    }

    private static String rule(String limits) {
        return "version: 1\nrules:\n  - name: r\n    match:\n      http:\n        path: /api/**\n"
                + "    key: client-ip\n    " + limits;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("validEdgeCases")
    void aValidEdgeCaseIsAcceptedByTheLoaderAndTheSchema(String description, String yaml) throws Exception {
        Path file = tempDir.resolve("rules.yaml");
        Files.writeString(file, yaml);
        Files.writeString(tempDir.resolve("internal-token"), "token-from-a-file-0123456789\n");
        ConfigLoader.load(file, environmentFor(yaml));
        List<Error> errors = validate(yaml);
        assertTrue(errors.isEmpty(), () -> description + ": refused by the schema: " + describe(errors));
    }

    // ---------------------------------------------------------------- known differences

    /**
     * What the two cannot agree on, pinned so that a change on either side is noticed: a JSON
     * schema cannot see environment variables, compare rule names across the list, or do
     * arithmetic on addresses (its patterns do bound a window's digits at 366 days and a Redis timeout's at 24
     * days). Update the schema's descriptions with these.
     */
    static Stream<Arguments> refusedByTheLoaderOnly() {
        return Stream.of(
                Arguments.of("a duplicate rule name",
                        "version: 1\nrules:\n  - {name: a, limit: 1, window: 1s}\n  - {name: a, limit: 2, window: 1s}\n",
                        "duplicate rule name 'a'"),
                // JSON Schema counts 5.0 as the integer 5; the loader wants the digits of a whole number
                Arguments.of("a limit written as a decimal", rule("limit: 5.0\n    window: 1s\n"),
                        "limit must be a whole number"),
                Arguments.of("a version written as a decimal", "version: 1.0\nrules: []\n",
                        "version must be the number 1"),
                Arguments.of("bits set after the prefix", "version: 1\nclient:\n  trusted-proxies: [10.0.0.1/8]\n",
                        "did you mean 10.0.0.0/8?"),
                Arguments.of("two limits of a rule in one window",
                        rule("limits:\n      - {limit: 5, window: 1m}\n      - {limit: 10, window: 60s}\n"),
                        "two limits of this rule have the window 1m"),
                // the schema checks a uri's form, but not what an ${env:NAME} in its host, port or
                // database holds
                Arguments.of("a redis uri whose port comes from the environment",
                        "version: 1\nstore:\n  redis:\n    uri: redis://redis.internal:${env:REDIS_PORT}/0\n",
                        "has a port out of range"),
                // YAML 1.2's core schema reads these as integers, and so the schema sees 1 and 16;
                // the loader wants a whole number written in decimal digits
                Arguments.of("a version written in octal", "version: 0o1\nrules: []\n", "this file is version 0o1"),
                Arguments.of("a version written in hex", "version: 0x1\nrules: []\n", "this file is version 0x1"),
                Arguments.of("a limit written in hex", rule("limit: 0x10\n    window: 1s\n"),
                        "limit must be a whole number"),
                Arguments.of("a limit written in octal", rule("limit: 0o17\n    window: 1s\n"),
                        "limit must be a whole number"),
                Arguments.of("a missing environment variable",
                        "version: 1\nexempt:\n  header: X-Internal-Token\n  tokens: [\"${env:NOT_SET_ANYWHERE}\"]\n",
                        "environment variable NOT_SET_ANYWHERE is not set"),
                // the schema sees the integer YAML makes of these (1, 0, a number); the loader
                // takes a rule name as written, and wants a whole number in plain decimal digits
                // (review of the thirty-third round)
                Arguments.of("a signed number as a rule name", "version: 1\nrules:\n  - {name: +1, limit: 1, window: 1s}\n",
                        "invalid rule name '+1'"),
                Arguments.of("a negative zero as a rule name", "version: 1\nrules:\n  - {name: -0, limit: 1, window: 1s}\n",
                        "invalid rule name '-0'"),
                Arguments.of("a number of 256 digits as a rule name",
                        "version: 1\nrules:\n  - {name: " + "1".repeat(256) + ", limit: 1, window: 1s}\n",
                        "expected 1 to 255 letters"),
                Arguments.of("a version with a leading zero", "version: 01\nrules: []\n", "this file is version 01"),
                Arguments.of("a version with a plus sign", "version: +1\nrules: []\n", "this file is version +1"),
                Arguments.of("a version tagged as a decimal", "version: !!float 1\nrules: []\n",
                        "version must be the number 1, not the decimal 1"),
                Arguments.of("an IPv6 prefix written in hex", "version: 1\nclient:\n  ipv6-prefix: 0x40\n",
                        "client.ipv6-prefix must be a whole number"),
                Arguments.of("an IPv6 prefix written as a decimal", "version: 1\nclient:\n  ipv6-prefix: 64.0\n",
                        "client.ipv6-prefix must be a whole number"),
                Arguments.of("max-keys in exponent notation", "version: 1\nstore:\n  max-keys: 1e3\n",
                        "store.max-keys must be a whole number"),
                // the schema's pattern takes any bracketed hexadecimal text for an IPv6 host
                Arguments.of("a redis uri with a bracketed host that is no IPv6 address",
                        "version: 1\nstore:\n  redis:\n    uri: \"redis://[1:2]\"\n", "is not a valid URI"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusedByTheLoaderOnly")
    void knownGapsOfTheSchema(String description, String yaml, String loaderSays) throws IOException {
        Path file = tempDir.resolve("rules.yaml");
        Files.writeString(file, yaml);
        ConfigException refused = assertThrows(ConfigException.class,
                () -> ConfigLoader.load(file, name -> name.equals("NOT_SET_ANYWHERE") ? null
                        : name.equals("REDIS_PORT") ? "65536" : "value"));
        assertTrue(refused.getMessage().contains(loaderSays), refused::getMessage);
        assertTrue(validate(yaml).isEmpty(), description + ": the schema now refuses it too; move it to invalid-rule-files");
    }

    static Stream<Arguments> refusedByTheSchemaOnly() {
        return Stream.of(
                Arguments.of("a duration with a leading zero", rule("limit: 1\n    window: 01s\n")),
                // YAML reads these as a boolean and a float, which the schema refuses as names;
                // the loader takes the text as written, as it takes 404
                // the schema's patterns are ASCII: \\p{L} is not portable (Python's re refuses it,
                // ECMAScript without the u flag reads it as 'p')
                Arguments.of("Java names beyond ASCII in a rule name, a method pattern and a key",
                        "version: 1\nrules:\n  - name: Überweisung#überweisen\n    match:\n"
                                + "      method: com.bank.Überweisung#überweisen\n"
                                + "    key: arg0.empfänger.ñame\n    limit: 5\n    window: 1s\n"),
                Arguments.of("a rule name in another script", "version: 1\nrules:\n  - {name: 服务#调用, limit: 1, window: 1s}\n"),
                Arguments.of("true as a rule name", "version: 1\nrules:\n  - {name: true, limit: 1, window: 1s}\n"),
                Arguments.of("a decimal as a rule name", "version: 1\nrules:\n  - {name: 1.5, limit: 1, window: 1s}\n"),
                Arguments.of("a redis uri entirely from the environment",
                        "version: 1\nstore:\n  type: redis\n  redis:\n    uri: ${env:REDIS_URL}\n"),
                // the loader reads these scalars as their text, as it reads a rule name of 404;
                // the schema wants strings (review of the thirty-third round)
                Arguments.of("a number as the exempt header",
                        "version: 1\nexempt:\n  header: 5\n  tokens: [abcdefghijklmnop1234]\n"),
                Arguments.of("a number as the redis key prefix",
                        "version: 1\nstore:\n  redis:\n    uri: redis://h\n    key-prefix: 5\n"),
                Arguments.of("a boolean as an HTTP method",
                        "version: 1\nrules:\n  - {name: a, match: {http: {path: /a, methods: [true]}}, limit: 1, window: 1s}\n"),
                Arguments.of("a number as a literal token",
                        "version: 1\nexempt:\n  header: X-T\n  tokens: [1234567890123456789]\n"),
                // leading zeros before a unit; the schema's patterns refuse them (01s above)
                Arguments.of("a redis timeout with a leading zero",
                        "version: 1\nstore:\n  redis:\n    uri: redis://h\n    timeout: 050ms\n"),
                Arguments.of("a window with a leading zero", "version: 1\nrules:\n  - {name: a, limit: 1, window: 0500ms}\n"),
                // an IPv6 zone in a redis uri's host; the schema's host pattern has no '%'
                Arguments.of("a redis uri with an IPv6 zone",
                        "version: 1\nstore:\n  redis:\n    uri: \"redis://[fe80::1%25eth0]\"\n"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusedByTheSchemaOnly")
    void knownStricterSchema(String description, String yaml) throws Exception {
        Path file = tempDir.resolve("rules.yaml");
        Files.writeString(file, yaml);
        ConfigLoader.load(file, name -> name.equals("REDIS_URL") ? "redis://127.0.0.1:6379/0" : "value");
        assertFalse(validate(yaml).isEmpty(), description + ": the schema now accepts it");
    }

    // ---------------------------------------------------------------- helpers

    /** A value for every ${env:NAME} the text names: visible ASCII, so it is a usable token. */
    private static Function<String, String> environmentFor(String text) {
        Map<String, String> env = new HashMap<>();
        Matcher matcher = ENV_REFERENCE.matcher(text);
        while (matcher.find()) {
            env.put(matcher.group(1), "test-" + matcher.group(1).toLowerCase() + "-0123456789");
        }
        return env::get;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> loadYaml(String text) {
        // The loader's own schema: "no", "on" and "yes" stay text, as the agent reads them.
        LoadSettings settings = LoadSettings.builder().setSchema(new CoreSchema()).build();
        Object document = new Load(settings).loadFromString(text);
        return document instanceof Map ? (Map<String, Object>) document : Map.of();
    }

    private static List<Error> validate(String yaml) {
        LoadSettings settings = LoadSettings.builder().setSchema(new CoreSchema()).build();
        Object document = new Load(settings).loadFromString(yaml);
        JsonNode tree = JSON.valueToTree(document);
        return schema.validate(tree);
    }

    /** The instance location as a JSON pointer: "" for the document, "/rules/0/limit". */
    private static String pointer(NodePath path) {
        StringBuilder pointer = new StringBuilder();
        for (int i = 0; i < path.getNameCount(); i++) {
            pointer.append('/').append(path.getElement(i));
        }
        return pointer.toString();
    }

    private static String describe(List<Error> errors) {
        return errors.stream()
                .map(e -> pointer(e.getInstanceLocation()) + " " + e.getMessage())
                .collect(Collectors.joining("\n  ", "\n  ", ""));
    }
}
