package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {

    static final String ENV_TOKEN = "envTokenValue-7f3a9c1e2b";
    static final String FILE_TOKEN = "fileTokenValue-4d8e2a6b0c";
    static final String LITERAL_TOKEN = "literalTokenValue-91b7d3";
    static final String REDIS_PASSWORD = "redisPassw0rd-x9q";
    static final Function<String, String> ENV =
            Map.of("RATELIMIT_INTERNAL_TOKEN", ENV_TOKEN, "EMPTY", "", "REDIS_PASSWORD", REDIS_PASSWORD)::get;

    @TempDir
    Path dir;

    static final String SPEC_EXAMPLE = """
            version: 1

            # Identity, not address: a request carrying one of these tokens is never counted.
            exempt:
              header: X-Internal-Token          # where HTTP requests carry the token
              tokens:                           # accepted tokens; any number, for rotation
                - ${env:RATELIMIT_INTERNAL_TOKEN}        # from the environment
                - ${file:secrets/internal-token}        # from a file, trailing newline trimmed
                - sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8

            client:
              trusted-proxies: [127.0.0.1/32, 10.0.0.0/8]
              ipv6-prefix: 64

            store:
              type: local
              max-keys: 100000
              on-error: allow
              redis:
                uri: redis://127.0.0.1:6379/0
                timeout: 50ms
                key-prefix: "rl:"

            rules:
              - name: api-per-ip
                match:
                  http:
                    path: /api/**
                    methods: [GET, POST]
                key: client-ip
                limit: 300
                window: 1m

              - name: send-message
                match:
                  method: com.example.chat.MessageService#send
                key: arg0.userId
                limit: 5
                window: 1s
                on-reject: throw

              - name: report-export
                key: principal
                limit: 10
                window: 1h
            """;

    RuleSet parse(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "rules.yaml", dir, ENV);
    }

    /** The formatted errors of an invalid file. */
    List<String> errors(String yaml) {
        try {
            parse(yaml);
        } catch (ConfigException e) {
            return e.errors().stream().map(ConfigError::format).collect(Collectors.toList());
        }
        return fail("expected errors for:\n" + yaml);
    }

    /** Asserts that exactly one error is reported, at line:column, containing the fragment. */
    void assertError(String yaml, int line, int column, String fragment) {
        List<String> errors = errors(yaml);
        assertEquals(1, errors.size(), () -> "expected one error, got " + errors);
        String error = errors.get(0);
        assertTrue(error.startsWith("rules.yaml:" + line + ":" + column + ": "), () -> "position of " + error);
        assertTrue(error.contains(fragment), () -> "'" + fragment + "' not in " + error);
    }

    /**
     * An error repeats the value it is about; a value with a line break (a quoted "\\n", a block
     * scalar) once printed as two lines, the second looking like another error at a position of
     * the writer's choosing.
     */
    @Test
    void anErrorIsOneLineWhateverTheValueHolds() {
        String quoted = rule("""
                limit: 1
                window: 1s
                mode: "shadow\\nother.yaml:1:1: injected"
                """);
        List<String> errors = errors(quoted);
        assertEquals(1, errors.size(), () -> "one error: " + errors);
        assertFalse(errors.get(0).contains("\n"), errors.get(0));
        assertTrue(errors.get(0).startsWith("rules.yaml:6:11: "), errors.get(0));
        assertTrue(errors.get(0).contains("'shadow\\nother.yaml:1:1: injected'"), errors.get(0));

        List<String> block = errors(rule("limit: 1\nwindow: 1s\nmode: |\n  shadow\n  again\n"));
        assertEquals(1, block.size(), () -> "one error: " + block);
        assertFalse(block.get(0).contains("\n"), block.get(0));
        assertTrue(block.get(0).contains("shadow\\nagain"), block.get(0));
    }

    static String rule(String body) {
        return "version: 1\nrules:\n  - name: r\n" + body.stripIndent().lines()
                .map(l -> "    " + l).collect(Collectors.joining("\n")) + "\n";
    }

    void writeTokenFile() throws Exception {
        Files.createDirectories(dir.resolve("secrets"));
        Files.writeString(dir.resolve("secrets/internal-token"), FILE_TOKEN + "\r\n");
    }

    @Test
    void specExampleLoadsWithEveryValue() throws Exception {
        writeTokenFile();
        RuleSet rules = parse(SPEC_EXAMPLE);

        assertEquals("rules.yaml", rules.source());
        assertEquals(1, rules.version());
        ExemptConfig exempt = rules.exempt();
        assertTrue(exempt.isEnabled());
        assertEquals("X-Internal-Token", exempt.header());
        assertEquals(List.of("env:RATELIMIT_INTERNAL_TOKEN", "file:secrets/internal-token", "sha256"),
                exempt.tokens().stream().map(TokenSource::describe).collect(Collectors.toList()));
        assertEquals(TokenSource.Kind.FILE, exempt.tokens().get(1).kind());
        assertEquals("secrets/internal-token", exempt.tokens().get(1).reference());
        assertArrayEquals(sha256(ENV_TOKEN), exempt.digests().get(0));
        assertArrayEquals(sha256(FILE_TOKEN), exempt.digests().get(1), "the trailing CRLF is trimmed");
        assertArrayEquals(sha256("password"), exempt.digests().get(2));

        assertEquals(List.of(Cidr.parse("127.0.0.1"), Cidr.parse("10.0.0.0/8")), rules.client().trustedProxies());
        assertEquals(64, rules.client().ipv6Prefix());

        StoreConfig store = rules.store();
        assertEquals(StoreConfig.Type.LOCAL, store.type());
        assertEquals(100_000, store.maxKeys());
        assertEquals(OnError.ALLOW, store.onError());
        assertEquals("redis://127.0.0.1:6379/0", store.redis().uri());
        assertEquals(Duration.ofMillis(50), store.redis().timeout());
        assertEquals("rl:", store.redis().keyPrefix());

        assertEquals(3, rules.rules().size());
        RuleConfig api = rules.rule("api-per-ip").orElseThrow();
        assertEquals(List.of("/api/**"), api.httpMatch().paths());
        assertEquals(Set.of("GET", "POST"), api.httpMatch().methods());
        assertNull(api.methodPattern());
        assertEquals(KeySpec.parse("client-ip"), api.key());
        assertEquals(List.of(new LimitSpec(300, Duration.ofMinutes(1))), api.limits());
        assertEquals(Algorithm.FIXED_WINDOW, api.algorithm());
        assertEquals(Mode.ENFORCE, api.mode());
        assertEquals(OnReject.THROW, api.onReject());
        assertTrue(api.exempt());
        assertEquals(OnError.ALLOW, api.onError());
        assertEquals(25, api.line());
        assertEquals(5, api.column());
        assertEquals("api-per-ip: http [GET, POST] /api/** by client-ip: 300 per 1m, fixed-window, enforce",
                api.describe());

        RuleConfig send = rules.rule("send-message").orElseThrow();
        assertTrue(send.methodPattern().matchesClass("com.example.chat.MessageService"));
        assertTrue(send.methodPattern().matchesMethod("send"));
        assertEquals(List.of("userId"), send.key().parts().get(0).propertyPath());

        RuleConfig report = rules.rule("report-export").orElseThrow();
        assertNull(report.httpMatch());
        assertNull(report.methodPattern());
        assertEquals("report-export: named by principal: 10 per 1h, fixed-window, enforce", report.describe());
        assertTrue(rules.rule("missing").isEmpty());
    }

    private static final String OTHER_DIGEST = "a digest token is written sha256: (in lower case) and 64 hex"
            + " digits, the SHA-256 of the token; no other prefix or digest is accepted";

    static byte[] sha256(String token) {
        return TokenSource.sha256(token.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void loadResolvesTokenFilesAgainstTheRuleFilesDirectory() throws Exception {
        writeTokenFile();
        Path file = dir.resolve("ratelimit.yaml");
        Files.writeString(file, SPEC_EXAMPLE);
        RuleSet rules = ConfigLoader.load(file, ENV);
        assertEquals(file.toString(), rules.source());
        assertArrayEquals(sha256(FILE_TOKEN), rules.exempt().digests().get(1));
    }

    @Test
    void optionalSettingsAndAllForms() throws Exception {
        RuleSet rules = parse("""
                version: 1
                store:
                  on-error: reject
                rules:
                  - name: multi
                    match:
                      http:
                        path: [/a/*, /b/**]
                    key: [client-ip, header:X-Tenant]
                    limits:
                      - limit: 10
                        window: 1s
                      - {limit: 300, window: 1m}
                    algorithm: sliding-window
                    mode: shadow
                    exempt: false
                  - name: Service#run
                    match: {method: "**.Service#run*"}
                    key: "arg0, arg1.a.b"
                    limit: 1
                    window: 500ms
                    algorithm: token-bucket
                    on-reject: return-default
                    on-error: allow
                """);
        RuleConfig multi = rules.rules().get(0);
        assertEquals(List.of("/a/*", "/b/**"), multi.httpMatch().paths());
        assertTrue(multi.httpMatch().methods().isEmpty());
        assertEquals("[client-ip, header:X-Tenant]", multi.key().toString());
        assertEquals(List.of(new LimitSpec(10, Duration.ofSeconds(1)), new LimitSpec(300, Duration.ofMinutes(1))),
                multi.limits());
        assertEquals(Algorithm.SLIDING_WINDOW, multi.algorithm());
        assertEquals(Mode.SHADOW, multi.mode());
        assertFalse(multi.exempt());
        assertEquals(OnError.REJECT, multi.onError(), "a rule's on-error defaults to the store's");
        assertEquals("multi: http /a/*, /b/** by [client-ip, header:X-Tenant]: 10 per 1s and 300 per 1m,"
                + " sliding-window, shadow, counts internal callers, on-error reject", multi.describe());

        RuleConfig run = rules.rule("Service#run").orElseThrow();
        assertEquals(OnReject.RETURN_DEFAULT, run.onReject());
        assertEquals(OnError.ALLOW, run.onError());
        assertEquals(Algorithm.TOKEN_BUCKET, run.algorithm());
        assertTrue(run.key().usesArguments());
        assertEquals(List.of("a", "b"), run.key().parts().get(1).propertyPath());
        assertFalse(rules.exempt().isEnabled());
        assertNull(rules.exempt().header());
    }

    @Test
    void defaultsWhenSectionsAreAbsent() throws Exception {
        RuleSet rules = parse("version: 1\n");
        assertTrue(rules.rules().isEmpty());
        assertFalse(rules.exempt().isEnabled());
        assertEquals(64, rules.client().ipv6Prefix());
        assertTrue(rules.client().trustedProxies().isEmpty());
        assertEquals(StoreConfig.Type.LOCAL, rules.store().type());
        assertEquals(100_000, rules.store().maxKeys());
        assertNull(rules.store().redis());
        assertTrue(parse("version: 1\nrules:\n").rules().isEmpty());
        assertTrue(parse("version: 1\nrules: []\n").rules().isEmpty());

        RuleConfig rule = parse(rule("limit: 1\nwindow: 1s")).rules().get(0);
        assertTrue(rule.key().isGlobal(), "the default key is global");
    }

    @Test
    void emptyRuleSet() {
        RuleSet empty = RuleSet.empty("x.yaml");
        assertEquals("x.yaml", empty.source());
        assertTrue(empty.rules().isEmpty());
        assertFalse(empty.exempt().isEnabled());
        assertEquals(StoreConfig.defaults(), empty.store());
        assertEquals(ClientConfig.defaults(), empty.client());
    }

    // ---- errors, each at its position ----

    @Test
    void unknownKeyWithSuggestion() {
        assertError(rule("limt: 5\nlimit: 5\nwindow: 1s"), 4, 5, "unknown key 'limt' (did you mean 'limit'?)");
        assertError("version: 1\nstroe: {}\n", 2, 1, "unknown key 'stroe' (did you mean 'store'?)");
        assertError("version: 1\nstore:\n  redis:\n    uri: redis://h\n    timout: 1s\n", 5, 5,
                "(did you mean 'timeout'?)");
    }

    /**
     * A file ending in {@code ---}, with nothing or only a comment after it, holds one document
     * (review item L7 of the thirty-third round: it was refused as holding two); a second document
     * with anything in it is refused where it starts, whatever is wrong inside it.
     */
    @Test
    void emptyDocumentsAfterTheRulesArePassedOver() throws Exception {
        String one = rule("limit: 3\nwindow: 1s");
        for (String tail : List.of("---\n", "---\n# generated\n", "---\n---\n", "--- # end\n", "...\n---\n")) {
            assertEquals(3, parse(one + tail).rules().get(0).limits().get(0).limit(), tail);
        }
        assertError(one + "---\nversion: 1\n", 6, 1, "invalid YAML: expected a single document in the stream");
        assertError(one + "--- ~\n", 6, 1, "but found another document");
        assertError(one + "---\nrules: [\n", 6, 1, "but found another document");
        // the empty document between is passed over: the one with something in it is named
        assertError("version: 1\n---\n---\nrules: []\n", 3, 1, "but found another document");
    }

    /**
     * A misspelt required key is one mistake: it is reported as an unknown key with the
     * suggestion, not again as the key it was meant to be being missing (review item L7 of the
     * thirty-third round: {@code limt: 5} also read "limit is missing"). What is really missing is
     * still said.
     */
    @Test
    void aMisspeltRequiredKeyIsReportedOnce() {
        assertError(rule("limt: 5\nwindow: 1s"), 4, 5, "unknown key 'limt' (did you mean 'limit'?)");
        assertError(rule("limit: 5\nwindw: 1s"), 5, 5, "unknown key 'windw' (did you mean 'window'?)");
        assertError(rule("limts: [{limit: 1, window: 1s}]"), 4, 5, "unknown key 'limts' (did you mean 'limits'?)");
        assertError(rule("limits:\n  - {limit: 1, windw: 1s}"), 5, 20, "unknown key 'windw' (did you mean 'window'?)");
        assertError("version: 1\nrules:\n  - nmae: r\n    limit: 1\n    window: 1s\n", 3, 5,
                "unknown key 'nmae' (did you mean 'name'?)");
        assertError(rule("match: {htp: {path: /a}}\nlimit: 1\nwindow: 1s"), 4, 13,
                "unknown key 'htp' (did you mean 'http'?)");
        assertError(rule("match: {http: {pth: /a}}\nlimit: 1\nwindow: 1s"), 4, 20,
                "unknown key 'pth' (did you mean 'path'?)");
        assertError("version: 1\nstore:\n  type: redis\n  redis:\n    ur: redis://h\n", 5, 5,
                "unknown key 'ur' (did you mean 'uri'?)");
        assertError("version: 1\nstore:\n  type: redis\n  rediss: {uri: redis://h}\n", 4, 3,
                "unknown key 'rediss' (did you mean 'redis'?)");
        assertError("version: 1\nexempt:\n  headr: X-T\n  tokens: [sha256:" + "a".repeat(64) + "]\n", 3, 3,
                "unknown key 'headr' (did you mean 'header'?)");
        assertError("version: 1\nexempt:\n  header: X-T\n  tokns: [sha256:" + "a".repeat(64) + "]\n", 4, 3,
                "unknown key 'tokns' (did you mean 'tokens'?)");
        // the other half of a pair is still missing, and said so
        assertEquals(List.of("rules.yaml:3:5: rule 'r' needs both limit and window; window is missing",
                "rules.yaml:4:5: unknown key 'limt' (did you mean 'limit'?)"), errors(rule("limt: 5")));
        // an unknown key that is no near miss leaves the missing key reported
        List<String> unrelated = errors(rule("quota: 5\nwindow: 1s"));
        assertEquals(2, unrelated.size(), unrelated::toString);
        assertTrue(unrelated.get(0).startsWith("rules.yaml:4:5: unknown key 'quota' in "), unrelated::toString);
        assertEquals("rules.yaml:5:5: rule 'r' needs both limit and window; limit is missing", unrelated.get(1));
    }

    /**
     * A token indented one level too far, or a token list written as a mapping, is read as a
     * key: an error named it, and check printed it (the reload review). A key as long as a token
     * may be is not shown; no key the file knows is that long.
     */
    @Test
    void anUnknownKeyAsLongAsATokenIsNotShown() {
        String token = "Zq8vN3pL0sT6wR2y";
        List<String> misIndented = errors("version: 1\nexempt:\n  header: X-Internal-Token\n  " + token + ":\n");
        assertTrue(misIndented.contains("rules.yaml:4:3: unknown key of 16 characters (not shown: it may be a token)"
                + " in exempt; expected one of header, tokens"), misIndented::toString);
        assertTrue(misIndented.stream().noneMatch(error -> error.contains(token)), misIndented::toString);
        List<String> asMapping = errors("version: 1\nexempt:\n  header: X-Internal-Token\n  tokens: {" + token
                + "-rotated: x, " + token + "-rotated: y}\n");
        assertTrue(asMapping.stream().noneMatch(error -> error.contains(token)), asMapping::toString);
        List<String> duplicated = errors("version: 1\n" + token + ": 1\n" + token + ": 2\n");
        assertTrue(duplicated.stream().noneMatch(error -> error.contains(token)), duplicated::toString);
        assertEquals(2, duplicated.size(), duplicated::toString);
        // a key one short of a token's length is a key, and named
        assertError("version: 1\nclient:\n  trusted-proxie5: 1\n", 3, 3,
                "unknown key 'trusted-proxie5' (did you mean 'trusted-proxies'?)");
    }

    @Test
    void unknownKeyWithoutCloseMatchListsTheKnownOnes() {
        assertError("version: 1\nclient:\n  banana: 1\n", 3, 3,
                "unknown key 'banana' in client; expected one of trusted-proxies, ipv6-prefix");
    }

    @Test
    void wrongTypes() {
        assertError(rule("limit: [1]\nwindow: 1s"), 4, 12, "limit must be a whole number of at least 1, not a list");
        assertError(rule("limit: \"300\"\nwindow: 1s"), 4, 12, "not the text '300'");
        assertError(rule("limit: 1\nwindow: {a: 1}"), 5, 13, "window must be text, not a mapping");
        assertError("version: 1\nrules: {a: 1}\n", 2, 8, "rules must be a list, not a mapping");
        assertError("version: 1\nstore: local\n", 2, 8, "store must be a mapping");
        assertError(rule("limit: 1\nwindow: 1s\nexempt: yes"), 6, 13, "exempt must be true or false");
        assertError("version: 1\nclient:\n  trusted-proxies: 10.0.0.0/8\n", 3, 20,
                "client.trusted-proxies must be a list, not text");
        assertError("- a\n- b\n", 1, 1, "the rule file must be a mapping");
    }

    /**
     * A rule's exempt: is a boolean, and someone may paste the internal token there. Its value was
     * echoed ("not the text '...'"); a boolean setting now names only the type.
     */
    @Test
    void aTextWhereExemptWantsABooleanIsNotPrinted() {
        String token = "my-internal-secret-token-123";
        List<String> errors = errors(rule("limit: 1\nwindow: 1s\nexempt: " + token));
        assertEquals(List.of("rules.yaml:6:13: exempt must be true or false, not text"), errors);
        assertEquals(List.of("rules.yaml:6:13: exempt must be true or false, not a number"),
                errors(rule("limit: 1\nwindow: 1s\nexempt: 8734982374982374")));
    }

    @Test
    void badLimits() {
        assertError(rule("limit: 0\nwindow: 1s"), 4, 12, "limit must be a whole number of at least 1, not 0");
        assertError(rule("limit: -5\nwindow: 1s"), 4, 12, "not -5");
        assertError(rule("limit: 2.5\nwindow: 1s"), 4, 12, "not '2.5'");
        assertError(rule("limit: 9223372036854775808\nwindow: 1s"), 4, 12, "(too large)");
        assertError(rule("window: 1s"), 4, 5, "rule 'r' needs both limit and window; limit is missing");
        assertError(rule("key: global"), 3, 5, "rule 'r' needs a limit and a window");
        assertError(rule("limit: 1\nwindow: 1s\nlimits: [{limit: 1, window: 1s}]"), 6, 5,
                "either limit and window, or limits, not both");
        assertError(rule("limits: []"), 4, 13, "limits is an empty list");
        assertError(rule("limits:\n  - {limit: 1}"), 5, 10, "needs both limit and window; window is missing");
        assertError(rule("limits:\n  - {limit: 1, window: 1s, burst: 2}"), 5, 32, "unknown key 'burst'");
    }

    @Test
    void badDurations() {
        assertError(rule("limit: 1\nwindow: 5x"), 5, 13, "invalid duration '5x'");
        assertError(rule("limit: 1\nwindow: 0s"), 5, 13, "must be at least 1ms");
        assertError(rule("limit: 1\nwindow: 400d"), 5, 13, "longer than the maximum of 366d");
        assertError("version: 1\nstore:\n  redis:\n    uri: redis://h\n    timeout: 50\n", 5, 14,
                "store.redis.timeout: invalid duration '50'");
    }

    @Test
    void duplicateRuleNamePointsAtTheSecond() {
        assertError("""
                version: 1
                rules:
                  - name: same
                    limit: 1
                    window: 1s
                  - name: same
                    limit: 2
                    window: 1s
                """, 6, 11, "duplicate rule name 'same' (first used on line 3)");
    }

    /** The audit's file: the alias has no position of its own, so the item is named, not "line 3 repeats line 3". */
    @Test
    void aRuleRepeatedThroughAnAliasNamesTheItem() {
        assertError("version: 1\nrules:\n  - &a {name: a, key: global, limit: 1, window: 1s}\n  - *a\n", 3, 15,
                "duplicate rule name 'a': item 2 of rules is an alias of the rule on line 3; each rule needs a name of its own");
    }

    /**
     * A rule of its own whose name comes through an alias ({@code name: *n}) or a merge
     * ({@code <<: *a}) is positioned at its own item and says how: it is not an alias of the rule
     * (the message said so), and the name's position is the first rule's.
     */
    @Test
    void aNameTakenThroughAnAliasOrAMergeNamesTheItemAndHow() {
        assertError("version: 1\nrules:\n  - {name: &n a, key: global, limit: 1, window: 1s}\n"
                + "  - {name: *n, key: global, limit: 2, window: 1s}\n", 4, 5,
                "duplicate rule name 'a': item 2 of rules takes the name on line 3 through an alias or a merge (<<);"
                        + " each rule needs a name of its own");
        assertError("version: 1\nrules:\n  - &r {name: a, key: global, limit: 1, window: 1s}\n"
                + "  - {<<: *r, limit: 2}\n", 4, 5,
                "duplicate rule name 'a': item 2 of rules takes the name on line 3 through an alias or a merge (<<);"
                        + " each rule needs a name of its own");
    }

    @Test
    void duplicateMappingKey() {
        assertError("version: 1\nstore:\n  max-keys: 5\n  max-keys: 6\n", 4, 3,
                "duplicate key 'max-keys' in store (first given on line 3)");
    }

    @Test
    void badRuleNames() {
        assertError(rule("limit: 1\nwindow: 1s").replace("name: r", "name: -r"), 3, 11, "invalid rule name '-r'");
        assertError(rule("limit: 1\nwindow: 1s").replace("name: r", "name: a b"), 3, 11, "invalid rule name");
        assertError(rule("limit: 1\nwindow: 1s").replace("name: r", "name: " + "x".repeat(256)), 3, 11,
                "1 to 255");
        assertError(rule("limit: 1\nwindow: 1s").replace("name: r", "name: \"a|b\""), 3, 11, "invalid rule name");
        assertError(rule("limit: 1\nwindow: 1s").replace("name: r", "name: \"\u0301send\""), 3, 11,
                "invalid rule name");
        assertError(rule("limit: 1\nwindow: 1s").replace("name: r", "name: \"a\uD83D\uDE00\""), 3, 11,
                "invalid rule name");
        assertError("version: 1\nrules:\n  - limit: 1\n    window: 1s\n", 3, 5, "rule 1 needs a name");
    }

    @Test
    void badMatches() {
        assertError(rule("match: {http: {path: api}}\nlimit: 1\nwindow: 1s"), 4, 26, "must start with '/'");
        assertError(rule("match: {http: {path: /a/**b}}\nlimit: 1\nwindow: 1s"), 4, 26, "'**' must be a whole segment");
        assertError(rule("match: {http: {path: [/a, 'b']}}\nlimit: 1\nwindow: 1s"), 4, 31, "must start with '/'");
        assertError(rule("match: {http: {path: /a, methods: [GET, 'P T']}}\nlimit: 1\nwindow: 1s"), 4, 45,
                "invalid HTTP method 'P T'");
        assertError(rule("match: {http: {methods: [GET]}}\nlimit: 1\nwindow: 1s"), 4, 19, "match.http needs a path");
        assertError(rule("match: {method: 'com.x.A#<init>'}\nlimit: 1\nwindow: 1s"), 4, 21,
                "constructors and static initialisers cannot be limited");
        assertError(rule("match: {method: com.x.A}\nlimit: 1\nwindow: 1s"), 4, 21, "expected CLASS#METHOD");
        assertError(rule("match: {http: {path: /a}, method: 'a.B#c'}\nlimit: 1\nwindow: 1s"), 4, 31,
                "match takes http or method, not both");
        assertError(rule("match: {}\nlimit: 1\nwindow: 1s"), 4, 12, "match needs http");
    }

    @Test
    void badKeys() {
        assertError(rule("key: ip\nlimit: 1\nwindow: 1s"), 4, 10, "invalid key 'ip'");
        assertError(rule("key: [client-ip, 'header:a b']\nlimit: 1\nwindow: 1s"), 4, 22, "HTTP token");
        assertError(rule("key: [global, principal]\nlimit: 1\nwindow: 1s"), 4, 10, "cannot be combined");
        assertError(rule("key: []\nlimit: 1\nwindow: 1s"), 4, 10, "key is an empty list");
        assertError(rule("match: {http: {path: /a}}\nkey: arg0.id\nlimit: 1\nwindow: 1s"), 5, 10,
                "an http rule has no method arguments");
        assertError(rule("match: {http: {path: /a}}\non-reject: return-default\nlimit: 1\nwindow: 1s"), 5, 16,
                "always answers 429");
    }

    @Test
    void badEnumsListTheAcceptedValues() {
        assertError(rule("limit: 1\nwindow: 1s\nalgorithm: leaky-bucket"), 6, 16,
                "unknown algorithm 'leaky-bucket'; expected one of fixed-window, sliding-window, token-bucket");
        assertError(rule("limit: 1\nwindow: 1s\nmode: dry-run"), 6, 11, "expected one of enforce, shadow");
        assertError(rule("limit: 1\nwindow: 1s\non-reject: null-value"), 6, 16,
                "expected one of throw, return-default");
        assertError("version: 1\nstore:\n  on-error: ignore\n", 3, 13, "expected one of allow, reject");
        assertError("version: 1\nstore:\n  type: memcached\n", 3, 9, "expected one of local, redis");
    }

    @Test
    void badClientSettings() {
        assertError("version: 1\nclient:\n  trusted-proxies: [10.0.0.0/8, proxy.example.com]\n", 3, 33,
                "host names are not accepted");
        assertError("version: 1\nclient:\n  ipv6-prefix: 0\n", 3, 16, "from 1 to 128, not 0");
        assertError("version: 1\nclient:\n  ipv6-prefix: 129\n", 3, 16, "from 1 to 128, not 129");
    }

    @Test
    void badStoreSettings() {
        assertError("version: 1\nstore:\n  max-keys: 0\n", 3, 13, "store.max-keys must be a whole number of at least 1");
        assertError("version: 1\nstore:\n  redis:\n    uri: http://h\n", 4, 10, "must start with redis://");
        assertError("version: 1\nstore:\n  redis:\n    timeout: 1s\n", 4, 5, "store.redis needs a uri");
    }

    @Test
    void deeplyNestedYamlIsAConfigErrorNotAStackOverflow() {
        // the parser recurses per level; thousands of levels once escaped as StackOverflowError,
        // which the agent's start-up caught as "could not start" and ran without limits
        String flow = "version: 1\nrules: " + "[".repeat(20_000) + "]".repeat(20_000) + "\n";
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigLoader.parse(flow, "rules.yaml", Path.of("."), name -> null));
        assertEquals(List.of("rules.yaml:1:1: the rule file nests lists or mappings too deeply to be a rule file"),
                e.errors().stream().map(ConfigError::format).collect(Collectors.toList()));
    }

    @Test
    void aRedisStoreIsReadWithItsSection() throws Exception {
        RuleSet rules = parse("version: 1\nstore:\n  type: redis\n  on-error: reject\n  redis:\n"
                + "    uri: rediss://h:6380/2\n    timeout: 20ms\n    key-prefix: \"app1:\"\n");
        assertEquals(StoreConfig.Type.REDIS, rules.store().type());
        assertEquals(OnError.REJECT, rules.store().onError());
        assertEquals("rediss://h:6380/2", rules.store().redis().uri());
        assertEquals(java.time.Duration.ofMillis(20), rules.store().redis().timeout());
        assertEquals("app1:", rules.store().redis().keyPrefix());
    }

    @Test
    void aRedisStoreNeedsAValidSection() {
        List<String> errors = errors("""
                version: 1
                store:
                  type: redis
                  redis:
                    uri: ftp://h
                    key-prefix: "a{b}:"
                """);
        assertEquals(List.of(
                "rules.yaml:5:10: store.redis.uri must start with redis:// (or rediss:// for TLS) followed by a host,"
                        + " such as redis://127.0.0.1:6379/0",
                "rules.yaml:6:17: store.redis.key-prefix must not contain { or }"), errors);
        assertError("version: 1\nstore:\n  type: redis\n", 3, 9, "type: redis needs a store.redis section");
    }

    @Test
    void redisUriTakesEnvironmentReferencesAndIsMaskedWhenPrinted() throws Exception {
        RuleSet rules = parse("version: 1\nstore:\n  redis:\n    uri: redis://app:${env:REDIS_PASSWORD}@h:6379/0\n");
        RedisConfig redis = rules.store().redis();
        assertEquals("redis://app:" + REDIS_PASSWORD + "@h:6379/0", redis.uri());
        assertFalse(redis.toString().contains(REDIS_PASSWORD));
        assertFalse(rules.store().toString().contains(REDIS_PASSWORD));
        assertTrue(redis.toString().startsWith("redis://app:****@h:6379/0"), redis.toString());
        assertEquals("redis://:****@h", new RedisConfig("redis://:" + REDIS_PASSWORD + "@h", Duration.ofMillis(5),
                "p").maskedUri());
        assertEquals("redis://h:1/0", new RedisConfig("redis://h:1/0", Duration.ofMillis(5), "p").maskedUri());

        assertError("version: 1\nstore:\n  redis:\n    uri: redis://${env:NOT_SET}@h\n", 4, 10,
                "environment variable NOT_SET, used in store.redis.uri, is not set");
    }

    @Test
    void aRedisUriTheClientCannotUseIsRefusedWithoutRepeatingIt() {
        // each of these once passed the check and then stopped the agent at start-up ("could not
        // start"), the application running without limits, and the client's message printed the URI
        String secret = "Zm9v/YmFy+c2VjcmV0==";
        Map<String, String> uris = new LinkedHashMap<>();
        uris.put("redis://app:" + secret + "@127.0.0.1:6399/0", "names no host");
        uris.put("redis://app:p%zz" + secret + "@h:1/0", "is not a valid URI (malformed escape pair at character 14)");
        uris.put("redis://app:pa ss" + secret + "@h:1/0", "is not a valid URI (illegal character in authority");
        uris.put("redis://app:" + secret.replace('/', '#') + "@h:1/0", "names no host");
        uris.put("redis://app:1?" + secret + "@h:1/0", "takes no query");
        uris.put("redis://h:6399/abc" + secret, "has a path that is not a database number");
        uris.put("redis://h:6399/0/1", "has a path that is not a database number");
        uris.put("redis://h:6399/99999999999", "has a path that is not a database number");
        uris.put("redis://h:notaport/0", "names no host");
        uris.put("redis://h:70000/0", "has a port out of range");
        uris.put("redis://@", "names no host");
        uris.put("redis://h_o_s_t:6399/0", "names no host");
        // the client refuses a lone name ("Password not provided") when the store is built
        uris.put("redis://" + secret.replace('/', 'x').replace('=', 'y') + "@h:1/0", "has a user name and no password");
        // passed check, then failed at every connection: AUTH with an empty password
        uris.put("redis://:@h:6399/0", "has an empty password");
        uris.put("redis://app:@h:6399/0", "has an empty password");
        for (Map.Entry<String, String> uri : uris.entrySet()) {
            List<String> errors = errors("version: 1\nstore:\n  redis:\n    uri: \"" + uri.getKey() + "\"\n");
            assertEquals(1, errors.size(), uri.getKey() + ": " + errors);
            String error = errors.get(0);
            assertTrue(error.startsWith("rules.yaml:4:10: store.redis.uri " + uri.getValue()), uri.getKey() + ": " + error);
            assertFalse(error.contains(secret) || error.contains("Zm9v") || error.contains("6399"),
                    uri.getKey() + ": " + error);
            assertThrows(IllegalArgumentException.class, () -> new RedisConfig(uri.getKey(), Duration.ofMillis(5), "p"));
        }
        assertError("version: 1\nstore:\n  redis:\n    uri: redis://h\n    timeout: 25d\n", 5, 14,
                "store.redis.timeout must be at most 24d");
    }

    /**
     * Every message quotes at most the first 64 characters of a value, as the README says: names,
     * durations, keys, paths, address blocks, methods, patterns, numbers and the rule's label
     * were quoted whole, and through an alias a 300 KB value made megabytes of errors (review of
     * the thirty-third round). A number of a million digits is refused without parsing it (it
     * took 15 s).
     */
    @Test
    void longValuesAreCutInEveryMessage() throws Exception {
        String x = "x".repeat(300_000);
        String nines = "9".repeat(1_000_000);
        List<String> files = List.of(
                "version: 1\nrules:\n  - name: " + x + "\n    limit: 1\n    window: 1s\n",
                "version: 1\nrules:\n  - name: a\n    limit: 1\n    window: " + x + "\n",
                "version: 1\nrules:\n  - name: a\n    key: " + x + "\n    limit: 1\n    window: 1s\n",
                "version: 1\nrules:\n  - name: a\n    match:\n      http:\n        path: \"/" + x + " \"\n"
                        + "    limit: 1\n    window: 1s\n",
                "version: 1\nrules:\n  - name: a\n    match:\n      http:\n        path: /a\n        methods: [\"" + x
                        + " \"]\n    limit: 1\n    window: 1s\n",
                "version: 1\nrules:\n  - name: a\n    match:\n      method: " + x + "\n    limit: 1\n    window: 1s\n",
                "version: 1\nclient:\n  trusted-proxies: [" + x + "]\n",
                "version: 1\nrules:\n  - name: a\n    limit: " + nines + "\n    window: 1s\n",
                "version: 1\nrules:\n  - name: a\n    limit: -" + nines + "\n    window: 1s\n",
                "version: " + nines + "\n",
                "version: 1\nstore:\n  max-keys: " + x + "\n");
        for (String file : files) {
            List<String> errors = errors(file);
            String shown = file.substring(0, 60);
            assertFalse(errors.isEmpty(), shown);
            for (String error : errors) {
                assertTrue(error.length() < 400, () -> shown + ": " + error.substring(0, 400));
                assertTrue(error.contains(" characters)"), () -> shown + ": " + error);
            }
        }
        assertTrue(errors("version: 1\nrules:\n  - name: a\n    limit: " + nines + "\n    window: 1s\n").get(0)
                .endsWith("(1000000 characters) (too large)"));
        assertTrue(errors("version: 1\nrules:\n  - name: a\n    limit: -" + nines + "\n    window: 1s\n").get(0)
                .endsWith("(1000001 characters) (too small)"));
        assertTrue(errors("version: 1\nrules:\n  - name: a\n    limit: -9999999999999999999\n    window: 1s\n").get(0)
                .endsWith("not -9999999999999999999 (too small)"));
        // a cut never splits a surrogate pair, and counts characters, not UTF-16 units
        String emoji = "a".repeat(63) + "\uD83D\uDE00" + "b".repeat(10);
        assertEquals("'" + "a".repeat(63) + "...' (74 characters)", NodeReader.quoted(emoji));
        // leading zeros are not digits of the number
        assertEquals(5, parse("version: 1\nrules:\n  - name: a\n    limit: 0000000000000000000000005\n    window: 1s\n")
                .rule("a").orElseThrow().limits().get(0).limit());

        // one value used by many rules through an alias: each message is short
        StringBuilder many = new StringBuilder("version: 1\nw: &w " + "y".repeat(300_000) + "\nrules:\n");
        for (int i = 0; i < 26; i++) {
            many.append("  - {name: *w, window: 1s}\n");
        }
        List<String> errors = errors(many.toString());
        assertTrue(errors.stream().mapToInt(String::length).sum() < 26 * 3 * 400, errors.get(0));
    }

    /**
     * The agent refuses a rule file that is a pipe: a FIFO no one writes to blocked start-up for
     * good, silently (review of the thirty-third round). {@code check} still reads a pipe.
     */
    @Test
    void theAgentRefusesAPipeForItsRuleFile() throws Exception {
        Path fifo = dir.resolve("rules.fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start().waitFor());
        ConfigException refused = assertThrows(ConfigException.class, () -> ConfigLoader.loadFile(fifo));
        assertEquals(List.of(fifo + ":1:1: is not a regular file (a pipe or a device): the agent reads its rule file"
                + " again whenever it changes, so it must be a file"),
                refused.errors().stream().map(ConfigError::format).collect(Collectors.toList()));
        Path file = Files.writeString(dir.resolve("plain.yaml"), "version: 1\nrules: []\n");
        assertEquals(0, ConfigLoader.loadFile(file).rules().size());
        ConfigException missing = assertThrows(ConfigException.class, () -> ConfigLoader.loadFile(dir.resolve("none.yaml")));
        assertTrue(missing.errors().get(0).format().endsWith("the rule file does not exist"));
    }

    /**
     * A file the system will not read is refused with the system's reason: a symbolic link loop
     * read "cannot read the rule file (FileSystemException)" (review item L7 of the thirty-third
     * round). The system's words for the loop (Linux's and macOS's begin alike).
     */
    @Test
    void anUnreadableFileSaysWhy() throws Exception {
        Path a = dir.resolve("a.yaml");
        Path b = dir.resolve("b.yaml");
        Files.createSymbolicLink(a, b.getFileName());
        Files.createSymbolicLink(b, a.getFileName());
        ConfigException loop = assertThrows(ConfigException.class, () -> ConfigLoader.loadFile(a));
        assertEquals(1, loop.errors().size());
        String error = loop.errors().get(0).format();
        assertTrue(error.startsWith(a + ":1:1: cannot read the rule file (Too many levels of symbolic links"), error);
    }

    /**
     * Invisible characters in a message are written as escapes: a key that began with a byte order
     * mark read {@code unknown key 'rules' (did you mean 'rules'?)} (review of the thirty-third
     * round).
     */
    @Test
    void invisibleCharactersInAMessageAreWrittenAsEscapes() {
        assertEquals(List.of("rules.yaml:2:1: unknown key '\\ufeffrules' (did you mean 'rules'?)"),
                errors("version: 1\n\uFEFFrules: []\n"));
        // one outside the basic plane too (a tag character, U+E0001)
        assertEquals(List.of("rules.yaml:2:1: unknown key '\\u{e0001}rules' (did you mean 'rules'?)"),
                errors("version: 1\n\uDB40\uDC01rules: []\n"));
        List<String> rtl = errors("version: 1\nrules:\n  - name: a\u202Eb\n    limit: 1\n    window: 1s\n");
        assertEquals(1, rtl.size(), rtl::toString);
        assertTrue(rtl.get(0).contains("'a\\u202eb'"), rtl.get(0));
    }

    /**
     * A second merge key in one mapping is refused as any key given twice: the parser merged both,
     * a key of the second kept and another dropped, without a word (review of the thirty-third
     * round). One key merges several mappings.
     */
    @Test
    void aSecondMergeKeyInOneMappingIsRefused() throws Exception {
        assertEquals(List.of("rules.yaml:5:5: duplicate key '<<' (first given on line 4); merge several mappings with one"
                + " key: <<: [*a, *b]"), errors("version: 1\nrules:\n  - name: a\n    <<: {limit: 1, window: 1s}\n"
                + "    <<: {key: client-ip, limit: 9}\n"));
        RuleSet merged = parse("version: 1\nrules:\n  - name: a\n    <<: [{limit: 1, window: 1s}, {key: client-ip}]\n");
        assertEquals(1, merged.rule("a").orElseThrow().limits().get(0).limit());
        assertEquals("client-ip", merged.rule("a").orElseThrow().key().toString());
    }

    /**
     * A quote or a bracket never closed is reported where it opens, not at the end of the file
     * the parser reached looking for its end (review of the thirty-third round).
     */
    @Test
    void anUnclosedQuoteOrBracketIsReportedWhereItOpens() {
        assertEquals(List.of("rules.yaml:3:11: invalid YAML: while scanning a quoted scalar, found unexpected end of"
                + " stream (it opens here and is not closed)"),
                errors("version: 1\nrules:\n  - name: \"a\n    limit: 1\n    window: 1s\n"));
        assertEquals(List.of("rules.yaml:2:9: invalid YAML: while parsing a flow mapping, expected ',' or '}', but got"
                + " <stream end> (it opens here and is not closed)"),
                errors("version: 1\nrules: [{name: a, limit: 1,\n  window: 1s\n"));
        // a node missing at the end is not said to open where the parser looked for it (review of the change)
        List<String> node = errors("version: 1\nrules: [a,");
        assertEquals(1, node.size(), node::toString);
        assertFalse(node.get(0).contains("it opens here"), node.get(0));
    }

    /**
     * A missing rule file given by a relative path names the directory it was looked for in, and an
     * empty or blank path says so (it read "is a directory": the working directory); review of the
     * thirty-third round.
     */
    @org.junit.jupiter.api.Test
    void aMissingRelativeFileNamesTheDirectoryAndAnEmptyPathSaysSo() {
        ConfigException relative = assertThrows(ConfigException.class,
                () -> ConfigLoader.read(Path.of("no-such-rules-file.yaml")));
        assertEquals("no-such-rules-file.yaml:1:1: the rule file does not exist (looked for in "
                + Path.of("").toAbsolutePath() + ")", relative.errors().get(0).format());
        ConfigException empty = assertThrows(ConfigException.class, () -> ConfigLoader.read(Path.of("")));
        assertEquals(":1:1: no rule file was named (the path is empty)", empty.errors().get(0).format());
        ConfigException up = assertThrows(ConfigException.class, () -> ConfigLoader.read(Path.of("../no-such-rules.yaml")));
        assertEquals("../no-such-rules.yaml:1:1: the rule file does not exist (looked for in "
                + Path.of("").toAbsolutePath().getParent() + ")", up.errors().get(0).format());
    }

    /** The parser's words for the commonest slips come with what to do (review of the thirty-third round). */
    @org.junit.jupiter.api.Test
    void theCommonestSyntaxSlipsSayWhatToDo() {
        assertEquals(List.of("rules.yaml:4:16: invalid YAML: mapping values are not allowed here (check this line's"
                + " indentation, or quote a value that holds ': ')"),
                errors("version: 1\nrules:\n  - name: a\n    key: header: X\n"));
        assertEquals(List.of("rules.yaml:4:4: invalid YAML: while parsing a block collection, expected <block end>, but"
                + " found '<block mapping start>' (check this line's indentation against the lines above)"),
                errors("version: 1\nrules:\n  - name: a\n   limit: 1\n"));
        assertEquals(List.of("rules.yaml:2:1: invalid YAML: while scanning for the next token, found a tab (indent with"
                + " spaces: YAML does not allow tabs there)"), errors("version: 1\n\trules: []\n"));
        // not an indentation slip: something follows a value on the line (review of the change)
        assertEquals(List.of("rules.yaml:3:15: invalid YAML: while parsing a block mapping, expected <block end>, but"
                + " found '<scalar>' (something follows a value on this line: quote the whole value, and write '' for a '"
                + " inside single quotes)"), errors("version: 1\nrules:\n  - name: 'it's'\n    key: global\n"));
    }

    /**
     * A character YAML allows nowhere (a control character), in a value, a quoted value or a
     * comment, is refused at its line and column by its code, not printed (it may sit inside a
     * token): it was refused at 1:1 as "special characters are not allowed" (the SPEC audit of the
     * thirty-seventh round). Columns count code points, an emoji before it one.
     */
    @Test
    void aCharacterYamlDoesNotAllowIsShownWhereItIs() {
        String base = "version: 1\nrules:\n  - name: a\n    key: global\n    limit: 1\n    window: 1m\n";
        for (int code : new int[] {0x00, 0x01, 0x0C, 0x1B, 0x7F}) {
            String c = new String(Character.toChars(code));
            String expected = String.format("invalid YAML: the character U+%04X is not allowed in a YAML file, not even in a"
                    + " comment or a quoted value (in a double-quoted value, write it as the escape \\u%04X)", code, code);
            assertEquals(List.of("rules.yaml:7:12: " + expected), errors(base + "# a comment" + c + " here\n"), "U+" + code);
            assertEquals(List.of("rules.yaml:4:13: " + expected), errors(base.replace("key: global", "key: \"gl" + c + "obal\"")));
            assertEquals(List.of("rules.yaml:3:13: " + expected), errors(base.replace("name: a", "name: \uD83D\uDE00a" + c)));
            assertEquals(List.of("rules.yaml:2:1: " + expected), errors("version: 1\r\n" + c + "rules: []\r\n"), "after CRLF");
        }
    }

    /** {@code version: 1.0} read "version must be the number 1, not a number" (review of the thirty-third round). */
    @Test
    void aVersionWrittenAsADecimalIsShown() {
        assertEquals(List.of("rules.yaml:1:10: version must be the number 1, not the decimal 1.0"),
                errors("version: 1.0\nrules: []\n"));
        assertEquals(List.of("rules.yaml:1:10: version must be the number 1, not the decimal 1"),
                errors("version: !!float 1\nrules: []\n"));
        // text tagged as a decimal is not shown: it may be a token (review of the change)
        assertEquals(List.of("rules.yaml:1:10: version must be the number 1, not a number"),
                errors("version: !!float s3cr3t-token\nrules: []\n"));
    }

    /** The parser's message once went on with the characters after a bad escape: up to 8 of a token. */
    @Test
    void aBadEscapeInATokenIsReportedWithoutTheCharactersAfterIt() {
        List<String> errors = errors("version: 1\nexempt:\n  header: X-Token\n  tokens:\n"
                + "    - \"literal-secret\\x4Gtoken-BBBB\"\n");
        assertEquals(1, errors.size(), errors::toString);
        assertTrue(errors.get(0).contains("expected escape sequence of 2 hexadecimal numbers"), errors.get(0));
        assertFalse(errors.get(0).contains("4G") || errors.get(0).contains("BBBB"), errors.get(0));

        // \U with a code beyond Unicode: the parser named the 8 digits after it (review of the
        // thirty-third round); from 80000000 on it threw NumberFormatException, reported at 1:1
        for (String code : new String[] {"7A8E7D6C", "00110000", "9F8E7D6C", "FFFFFFFF"}) {
            List<String> found = errors("version: 1\nexempt:\n  header: X-Token\n  tokens:\n    - \"Zk3\\U" + code
                    + "q1w2e3\"\n");
            assertEquals(1, found.size(), code + ": " + found);
            assertTrue(found.get(0).startsWith("rules.yaml:5:"), code + ": " + found.get(0));
            assertTrue(found.get(0).contains("found an escape whose code is beyond Unicode"), code + ": " + found.get(0));
            assertFalse(found.get(0).contains(code.substring(2)) || found.get(0).contains("q1w2"), code + ": " + found.get(0));
        }

        // the escape is found where it is one: not in a comment (with or without quotes), nor a
        // backslash written out, nor in single quotes (review of the change: 2:3, 2:6 and 3:4 were named)
        List<String> placed = errors("version: 1\n# \\U9abcdef0 in a comment\nx: \"\\\\U9ABCDEF0\"\n"
                + "# \"\\U80000000\"\ny: '\\U80000000'\nexempt:\n"
                + "  header: X-Token\n  tokens:\n    - \"Zk3\\U9F8E7D6Cq1w2\"\n");
        assertEquals(1, placed.size(), placed::toString);
        assertTrue(placed.get(0).startsWith("rules.yaml:9:11: invalid YAML: found an escape whose code is beyond Unicode"),
                placed.get(0));

        // an unknown escape that is not \U's eight digits is not said to be beyond Unicode (review of the change)
        List<String> unknown = errors("version: 1\nx: \"a\\qb\"\n");
        assertEquals(1, unknown.size(), unknown::toString);
        assertTrue(unknown.get(0).contains("found unknown escape character (left out)"), unknown.get(0));

        // the scanner names the character it stopped at: one or two of a value
        for (String value : new String[] {"\"SECRETab\\qSECRET\"", "|SECRET", "!<tag:%zzSECRET> x", "!\u00e9SECRET x"}) {
            List<String> found = errors("version: 1\nexempt:\n  header: X-Token\n  tokens:\n    - " + value + "\n");
            assertEquals(1, found.size(), value + ": " + found);
            assertFalse(found.get(0).matches(".*(\\(\\d+\\)|found [qSz\u00e9]).*"), value + ": " + found.get(0));
        }
    }

    @Test
    void aRedisUriWithoutPortConnectsToTheDefaultPort() throws Exception {
        RuleSet rules = parse("version: 1\nstore:\n  redis:\n    uri: redis://app:p%40ss@redis.internal\n");
        RedisConfig redis = rules.store().redis();
        assertEquals("redis://app:p%40ss@redis.internal", redis.uri());
        assertEquals(java.net.URI.create("redis://app:p%40ss@redis.internal:6379"), redis.connectionUri());
        assertEquals("redis://app:****@redis.internal", redis.maskedUri());
        assertEquals(java.net.URI.create("rediss://[::1]:6379/2"),
                new RedisConfig("rediss://[::1]/2", Duration.ofMillis(5), "p").connectionUri());
        assertEquals(java.net.URI.create("redis://h:6379/"),
                new RedisConfig("redis://h:/", Duration.ofMillis(5), "p").connectionUri());
        assertEquals(java.net.URI.create("redis://h:7000/1"),
                new RedisConfig("redis://h:7000/1", Duration.ofMillis(5), "p").connectionUri());
    }

    @Test
    void versionIsRequiredAndMustBeOne() {
        assertError("rules: []\n", 1, 1, "must start with 'version: 1'");
        assertError("version: \"1\"\n", 1, 10, "version must be the number 1");
        List<String> future = errors("version: 2\nfuture-section: {}\nrules: 7\n");
        assertEquals(List.of("rules.yaml:1:10: this agent reads rule files of version 1; this file is version 2"
                + " (use a newer agent, or write the file in the version 1 format)"), future,
                "the rest of a future file is not reported as errors");
    }

    @Test
    void emptyFile() {
        assertEquals(List.of("rules.yaml:1:1: the rule file is empty; it needs at least 'version: 1'"), errors(""));
        assertEquals(List.of("rules.yaml:1:1: the rule file is empty; it needs at least 'version: 1'"),
                errors("# only a comment\n"));
    }

    @Test
    void yamlSyntaxErrorIsOneLineAtItsPosition() {
        List<String> errors = errors("version: 1\nrules:\n  - name: a\n   limit: [1, 2\n");
        assertEquals(1, errors.size());
        String error = errors.get(0);
        assertTrue(error.matches("rules\\.yaml:\\d+:\\d+: invalid YAML: .*"), error);
        assertFalse(error.contains("\n"), error);
        assertFalse(error.contains("^"), "no snippet: " + error);

        // an unclosed bracket: where it opens, not the end of the file (3:1) the parser reached
        assertError("version: 1\nrules: [a\n", 2, 8, "invalid YAML");
        assertError("version: 1\n\tbad: tab\n", 2, 1, "invalid YAML");
        // a problem with an empty context once read "invalid YAML: , found undefined alias nope";
        // the alias's name is no longer repeated (a token can start with '*')
        assertEquals(List.of("rules.yaml:2:8: invalid YAML: found undefined alias (a value starting with '*' must be"
                + " quoted)"), errors("version: 1\nalias: *nope\n"));
    }

    @Test
    void multipleErrorsAreReportedTogetherInFileOrder() {
        List<String> errors = errors("""
                version: 1
                client:
                  ipv6-prefix: 200
                rules:
                  - name: a
                    limit: 0
                    window: 1x
                    mode: loud
                  - name: b
                    limt: 1
                """);
        assertEquals(6, errors.size(), errors::toString);
        assertTrue(errors.get(0).startsWith("rules.yaml:3:16: "), errors::toString);
        assertTrue(errors.get(1).startsWith("rules.yaml:6:12: "), errors::toString);
        assertTrue(errors.get(2).startsWith("rules.yaml:7:13: "), errors::toString);
        assertTrue(errors.get(3).startsWith("rules.yaml:8:11: "), errors::toString);
        // limt was meant for limit (reported below); what is missing is the window
        assertTrue(errors.get(4).startsWith("rules.yaml:9:5: rule 'b' needs both limit and window; window is missing"),
                errors::toString);
        assertTrue(errors.get(5).startsWith("rules.yaml:10:5: unknown key 'limt'"), errors::toString);
    }

    @Test
    void configExceptionMessageHasOneLinePerError() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> parse("version: 1\nstore:\n  max-keys: 0\n  on-error: x\n"));
        assertEquals(2, e.errors().size());
        assertEquals(e.errors().get(0).format() + "\n" + e.errors().get(1).format(), e.getMessage());
    }

    // ---- tokens ----

    @Test
    void tokenErrorsNameTheSourceButNeverTheValue() throws Exception {
        Files.writeString(dir.resolve("empty-token"), "\n");
        Files.writeString(dir.resolve("spaced-token"), FILE_TOKEN + " x\n");
        List<String> errors = errors("""
                version: 1
                exempt:
                  header: X-Internal-Token
                  tokens:
                    - ${env:MISSING_VAR}
                    - ${env:EMPTY}
                    - ${file:no-such-file}
                    - ${file:empty-token}
                    - ${file:spaced-token}
                    - sha256:abcd
                    - ${envv:RATELIMIT_INTERNAL_TOKEN}
                    - shortSecret1
                    - SHA256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8
                    - sha-256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8
                    - md5:5f4dcc3b5aa765d61d8327deb882cf99
                    - sha256=5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8
                    - sha256-XohImNooBHFR0OVvjcYpJ3NgPQ1qq73WKhHvch0VQtg=
                    - "{SHA256}5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"
                    - sha3-256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8
                """);
        assertEquals(List.of(
                "rules.yaml:5:7: environment variable MISSING_VAR is not set; it must hold the internal token",
                "rules.yaml:6:7: environment variable EMPTY is empty; it must hold the internal token",
                "rules.yaml:7:7: token file no-such-file does not exist",
                "rules.yaml:8:7: token file empty-token is empty; it must hold the internal token",
                "rules.yaml:9:7: the token in file spaced-token contains spaces, control or non-ASCII characters,"
                        + " which cannot be sent reliably in an HTTP header",
                "rules.yaml:10:7: a sha256: token must be followed by exactly 64 hex digits, the SHA-256 of the token",
                "rules.yaml:11:7: a token starting with '${' must be ${env:NAME} (NAME of letters, digits and _)"
                        + " or ${file:PATH}",
                "rules.yaml:12:7: this literal token is too short to be a secret: use at least 16 characters,"
                        + " or better ${env:NAME}, ${file:PATH} or sha256:HEX",
                // before, these three were taken as literal tokens: the public digest was the token
                "rules.yaml:13:7: " + OTHER_DIGEST,
                "rules.yaml:14:7: " + OTHER_DIGEST,
                "rules.yaml:15:7: " + OTHER_DIGEST,
                "rules.yaml:16:7: " + OTHER_DIGEST,
                "rules.yaml:17:7: " + OTHER_DIGEST,
                "rules.yaml:18:7: " + OTHER_DIGEST,
                "rules.yaml:19:7: " + OTHER_DIGEST), errors);
        for (String error : errors) {
            assertFalse(error.contains(FILE_TOKEN), error);
            assertFalse(error.contains(ENV_TOKEN), error);
            assertFalse(error.contains("shortSecret1"), error);
        }
    }

    /**
     * A token from the environment loses its trailing line breaks as a token file's does: a
     * Kubernetes Secret passed as a variable often ends in a newline, and such a token was once
     * refused as holding control characters, stopping the JVM. Only the end is trimmed.
     */
    @Test
    void anEnvironmentTokenIsTrimmedOfTrailingLineBreaksLikeAFileToken() throws Exception {
        String yaml = "version: 1\nexempt:\n  header: X-T\n  tokens:\n    - ${env:T}\n";
        for (String value : List.of(ENV_TOKEN + "\n", ENV_TOKEN + "\r\n", ENV_TOKEN + "\n\n")) {
            RuleSet rules = ConfigLoader.parse(yaml, "rules.yaml", dir, Map.of("T", value)::get);
            assertArrayEquals(sha256(ENV_TOKEN), rules.exempt().digests().get(0));
        }
        assertEquals(List.of("rules.yaml:5:7: environment variable T is empty; it must hold the internal token"),
                errorsWith(yaml, Map.of("T", "\r\n")));
        assertEquals(List.of("rules.yaml:5:7: the token in environment variable T contains spaces, control or"
                + " non-ASCII characters, which cannot be sent reliably in an HTTP header"),
                errorsWith(yaml, Map.of("T", "\n" + ENV_TOKEN)));
    }

    /**
     * Tokens from the environment or a file need the 16 characters a literal needs: a one-letter
     * token (RATELIMIT_INTERNAL_TOKEN=x) was accepted, and it is guessed at the first try. The
     * error names the variable or the file, never the value.
     */
    @Test
    void aShortTokenFromTheEnvironmentOrAFileIsRefused() throws Exception {
        String shortToken = "Qz7shortTok1234";
        Files.writeString(dir.resolve("short-token"), shortToken + "\n");
        String yaml = "version: 1\nexempt:\n  header: X-T\n  tokens:\n    - ${env:T}\n    - ${file:short-token}\n";
        List<String> errors = errorsWith(yaml, Map.of("T", "x"));
        assertEquals(List.of(
                "rules.yaml:5:7: the token in environment variable T is too short to be a secret: use at least 16"
                        + " characters (openssl rand -hex 32 makes one)",
                "rules.yaml:6:7: the token in file short-token is too short to be a secret: use at least 16"
                        + " characters (openssl rand -hex 32 makes one)"), errors);
        assertFalse(errors.toString().contains(shortToken), errors::toString);
        Files.writeString(dir.resolve("short-token"), shortToken + "5\n");
        RuleSet rules = ConfigLoader.parse(yaml, "rules.yaml", dir, Map.of("T", shortToken + "6\n")::get);
        assertArrayEquals(sha256(shortToken + "6"), rules.exempt().digests().get(0));
        assertArrayEquals(sha256(shortToken + "5"), rules.exempt().digests().get(1));
    }

    /**
     * A request's header value longer than 4,096 characters is forged without being hashed, so a
     * longer token never exempted its holder, and the file was taken without a word (the review of
     * the thirty-eighth round). Refused wherever it is written; 4,096 characters is accepted.
     */
    @Test
    void aTokenLongerThanTheHeaderCheckComparesIsRefused() throws Exception {
        String longest = "L".repeat(ExemptConfig.MAX_TOKEN_CHARS - 1) + "1";
        String tooLong = longest + "2";
        Files.writeString(dir.resolve("long-token"), tooLong + "\n");
        String yaml = "version: 1\nexempt:\n  header: X-T\n  tokens:\n    - ${env:T}\n    - ${file:long-token}\n"
                + "    - " + tooLong + "\n";
        List<String> errors = errorsWith(yaml, Map.of("T", tooLong));
        String why = " is longer than 4096 characters, the longest header value the agent compares: its holder"
                + " would never be exempt";
        assertEquals(List.of(
                "rules.yaml:5:7: the token in environment variable T" + why,
                "rules.yaml:6:7: the token in file long-token" + why,
                "rules.yaml:7:7: this literal token" + why), errors);
        assertFalse(errors.toString().contains(tooLong.substring(0, 64)), errors::toString);
        Files.writeString(dir.resolve("long-token"), longest + "\n");
        RuleSet rules = ConfigLoader.parse(yaml.replace(tooLong, longest), "rules.yaml", dir, Map.of("T", longest)::get);
        assertEquals(3, rules.exempt().digests().size());
        for (byte[] digest : rules.exempt().digests()) {
            assertArrayEquals(sha256(longest), digest);
        }
    }

    /**
     * A lone surrogate in a double-quoted literal token was written '?' by getBytes(UTF_8) and the
     * token accepted: the token in force was not the one written. It is refused as non-ASCII, and
     * so is a whole character beyond ASCII.
     */
    @Test
    void aLiteralTokenWithALoneSurrogateIsRefused() {
        String unsafe = "rules.yaml:5:7: this literal token contains spaces, control or non-ASCII characters,"
                + " which cannot be sent reliably in an HTTP header";
        for (String token : List.of("SECRETXYZ\\ud800abcdefgh", "SECRETXYZ\\udc00abcdefgh", "SECRETXYZ\\u00e9abcdefgh")) {
            List<String> errors = errors("version: 1\nexempt:\n  header: X-T\n  tokens:\n    - \"" + token + "\"\n");
            assertEquals(List.of(unsafe), errors, token);
        }
        assertEquals(List.of("rules.yaml:5:7: the token in environment variable T contains spaces, control or"
                + " non-ASCII characters, which cannot be sent reliably in an HTTP header"),
                errorsWith("version: 1\nexempt:\n  header: X-T\n  tokens:\n    - ${env:T}\n",
                        Map.of("T", "SECRETXYZ\ud800abcdefgh")));
    }

    /** The formatted errors of an invalid file read with the environment {@code env}. */
    List<String> errorsWith(String yaml, Map<String, String> env) {
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigLoader.parse(yaml, "rules.yaml", dir, env::get));
        return e.errors().stream().map(ConfigError::format).collect(Collectors.toList());
    }

    /**
     * A digest in the environment or in a token file is refused too: those hold the token itself,
     * and a digest there (a manifest kept in git) would make the public digest the token. Tokens
     * that only start with the same letters are still tokens.
     */
    @Test
    void aDigestFromTheEnvironmentOrAFileIsNotAToken() throws Exception {
        String digest = "sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8";
        Files.writeString(dir.resolve("token"), "SHA256:" + digest.substring(7) + "\n");
        ConfigException refused = assertThrows(ConfigException.class, () -> ConfigLoader.parse(
                "version: 1\nexempt:\n  header: X-T\n  tokens:\n    - ${env:T}\n    - ${file:token}\n",
                "rules.yaml", dir, Map.of("T", digest)::get));
        assertEquals(List.of(
                "rules.yaml:5:7: the token in environment variable T starts like a digest; the environment or a file"
                        + " holds the token itself (a digest is written sha256:HEX in the rule file)",
                "rules.yaml:6:7: the token in file token starts like a digest; the environment or a file holds the"
                        + " token itself (a digest is written sha256:HEX in the rule file)"),
                refused.errors().stream().map(ConfigError::format).collect(java.util.stream.Collectors.toList()));
        for (String token : List.of("shared-secret-0123456789", "sha256secret0123456789", "md5sum-is-not-it-0123",
                "Shad0w:0123456789abcdef", "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8")) {
            ConfigLoader.parse("version: 1\nexempt:\n  header: X-T\n  tokens:\n    - ${env:T}\n    - " + token + "\n",
                    "rules.yaml", dir, Map.of("T", token)::get);
        }
    }

    /**
     * A token written where YAML reads something else: an unquoted value starting with '*' is an
     * alias, which the parser named in its message; one that is all digits is a number, which a
     * type error named. Both once printed the token.
     */
    @Test
    void aTokenYamlReadsAsSomethingElseIsNotPrinted() {
        String alias = "Zx9SecretTokenValue42";
        assertError("version: 1\nexempt:\n  header: X-T\n  tokens:\n    - *" + alias + "\n", 5, 7,
                "found undefined alias (a value starting with '*' must be quoted)");
        assertFalse(errors("version: 1\nexempt:\n  header: X-T\n  tokens:\n    - *" + alias + "\n").get(0)
                .contains(alias));
        String digits = "8734982374982374";
        List<String> numberErrors = errors("version: 1\nexempt:\n  header: X-T\n  tokens: " + digits + "\n");
        assertEquals(List.of("rules.yaml:4:11: exempt.tokens must be a list, not a number"), numberErrors);
        List<String> tagErrors = errors("version: 1\nexempt:\n  header: X-T\n  tokens:\n    - !Secret!Tag42\n");
        assertFalse(tagErrors.toString().contains("Secret"), tagErrors.toString());
    }

    /**
     * A reference inside a token's text (Bearer-${env:X}) is refused: the Redis URI substitutes
     * its references, a token took the text for the secret, with no error, so the intended token
     * earned no exemption (the SPEC audit of the thirty-seventh round). A whole reference still reads.
     */
    @Test
    void aReferenceInsideATokenIsRefused() throws Exception {
        for (String token : List.of("Bearer-${env:T}-suffix", "prefix-long-enough-${file:token}", "abcdefghijklmnop${env:")) {
            List<String> errors = errorsWith("version: 1\nexempt:\n  header: X-T\n  tokens: [\"" + token + "\"]\n",
                    Map.of("T", "an-internal-token-long-enough"));
            assertEquals(List.of("rules.yaml:4:12: a token holding ${env: or ${file: must be one whole ${env:NAME} or"
                    + " ${file:PATH}: references are not substituted inside a token; put the whole token in the variable or the file"),
                    errors, token);
        }
        Map<String, String> env = Map.of("T", "an-internal-token-long-enough");
        RuleSet whole = ConfigLoader.parse("version: 1\nexempt:\n  header: X-T\n  tokens: [\"${env:T}\"]\n",
                "rules.yaml", dir, env::get);
        assertEquals(1, whole.exempt().tokens().size());
        // a literal token that holds '${' but no reference's opening is a token, as before
        RuleSet literal = ConfigLoader.parse("version: 1\nexempt:\n  header: X-T\n  tokens: [\"k7Qp${9zLmW2xR4vT8nB6cY1dF3gH5jA\"]\n",
                "rules.yaml", dir, env::get);
        assertEquals(1, literal.exempt().tokens().size());
    }

    @Test
    void exemptNeedsHeaderAndTokens() {
        assertError("version: 1\nexempt:\n  tokens: [sha256:" + "a".repeat(64) + "]\n", 3, 3, "exempt needs a header");
        assertError("version: 1\nexempt:\n  header: X-T\n", 3, 3, "exempt needs tokens");
        assertError("version: 1\nexempt:\n  header: X-T\n  tokens: []\n", 4, 11, "exempt.tokens is empty");
        assertError("version: 1\nexempt:\n  header: 'X T'\n  tokens: [sha256:" + "a".repeat(64) + "]\n", 3, 11,
                "exempt.header must be an HTTP header name");
    }

    /**
     * A token pasted as the header's name was a valid name, and check printed it (the review of
     * the thirty-eighth round). A name that is one of the tokens, in any case, is refused without
     * being repeated; a name that only looks like a token is kept (real names may: a review found
     * X-Oauth2AccessTokenHeader), and not shown.
     */
    @Test
    void aTokenPastedAsTheHeaderNameIsNeverShown() throws ConfigException {
        String wordy = "our-internal-service-secret-value";
        for (String header : List.of(wordy, wordy.toUpperCase(java.util.Locale.ROOT))) {
            List<String> errors = errors("version: 1\nexempt:\n  header: " + header + "\n  tokens:\n    - " + wordy + "\n");
            assertEquals(List.of("rules.yaml:3:11: exempt.header is one of the tokens; the header name is words such as"
                    + " X-Internal-Token, and the token goes under tokens only"), errors);
        }
        String digestToken = "    - sha256:" + "a".repeat(64) + "\n";
        String hex = "3f9a7c1e2b4d6f8a0c2e4b6d8f0a1c3e";
        ExemptConfig pasted = parse("version: 1\nexempt:\n  header: " + hex + "\n  tokens:\n" + digestToken).exempt();
        assertEquals(hex, pasted.header());
        assertEquals("header (32 characters, not shown: it looks like a token), tokens sha256", pasted.toString());
        assertEquals("exempt.header looks like a token, not a header name (a run of 20 or more letters and digits,"
                + " mixed), so it is not shown; if it is a token, put it under tokens only, and name the header"
                + " (X-Internal-Token)", pasted.headerWarning());
        for (String name : List.of("X-Internal-Token", "Ocp-Apim-Subscription-Key", "X-B3-TraceId",
                "XInternalServiceAuthorizationToken", "X-Token-1234567890123456789")) {
            ExemptConfig exempt = parse("version: 1\nexempt:\n  header: " + name + "\n  tokens:\n" + digestToken).exempt();
            assertEquals(name, exempt.header());
            assertEquals(null, exempt.headerWarning(), name);
            assertTrue(exempt.toString().startsWith("header " + name + ", "), exempt::toString);
        }
    }

    @Test
    void noTokenValueInAnyOutput() throws Exception {
        writeTokenFile();
        String yaml = SPEC_EXAMPLE.replace("    - sha256:", "    - " + LITERAL_TOKEN + "\n    - sha256:");
        RuleSet rules = parse(yaml);
        assertEquals(4, rules.exempt().tokens().size());
        assertEquals("literal", rules.exempt().tokens().get(2).describe());
        assertArrayEquals(sha256(LITERAL_TOKEN), rules.exempt().digests().get(2));
        StringBuilder everything = new StringBuilder()
                .append(rules).append(rules.exempt()).append(rules.client()).append(rules.store());
        for (TokenSource token : rules.exempt().tokens()) {
            everything.append(token).append(token.describe()).append(token.reference());
        }
        for (RuleConfig rule : rules.rules()) {
            everything.append(rule).append(rule.describe());
        }
        for (String secret : List.of(ENV_TOKEN, FILE_TOKEN, LITERAL_TOKEN)) {
            assertFalse(everything.toString().contains(secret), secret);
        }
    }

    @Test
    void noPlaintextTokenInAnyField() throws Exception {
        writeTokenFile();
        RuleSet rules = parse(SPEC_EXAMPLE.replace("    - sha256:", "    - " + LITERAL_TOKEN + "\n    - sha256:"));
        for (TokenSource token : rules.exempt().tokens()) {
            for (java.lang.reflect.Field field : TokenSource.class.getDeclaredFields()) {
                if (java.lang.reflect.Modifier.isStatic(field.getModifiers())) {
                    continue;
                }
                field.setAccessible(true);
                Object value = field.get(token);
                String text = value instanceof byte[] ? new String((byte[]) value, StandardCharsets.ISO_8859_1)
                        : String.valueOf(value);
                for (String secret : List.of(ENV_TOKEN, FILE_TOKEN, LITERAL_TOKEN)) {
                    assertFalse(text.contains(secret), field.getName());
                }
            }
        }
    }

    @Test
    void digestsAreDefensiveCopies() throws Exception {
        RuleSet rules = parse("version: 1\nexempt:\n  header: X-T\n  tokens: [" + LITERAL_TOKEN + "]\n");
        rules.exempt().digests().get(0)[0] ^= 1;
        rules.exempt().tokens().get(0).digest()[0] ^= 1;
        assertArrayEquals(sha256(LITERAL_TOKEN), rules.exempt().digests().get(0));
    }

    // ---- hostile files ----

    @Test
    void aliasBombFailsFastWithAnError() {
        String bomb = """
                version: 1
                a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
                b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
                c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
                d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
                e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
                f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
                g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
                h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
                i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
                """;
        // 9^9 values in 400 bytes: refused by the walk that counts them, after a million, at most
        assertEquals(List.of(TOO_MANY_VALUES), refusedQuicklyInBoundedMemory(bomb));
        // and where the reader looks: as rules, as a rule's paths, and as a list that holds itself
        assertEquals(List.of(TOO_MANY_VALUES), refusedQuicklyInBoundedMemory(bomb.replace("i: &i", "rules: &i")));
        String paths = "/p" + ", /p".repeat(2_000);
        assertEquals(List.of(TOO_MANY_VALUES), refusedQuicklyInBoundedMemory("version: 1\nrules:\n"
                + "  - &r {name: r, limit: 1, window: 1s, match: {http: {path: [" + paths + "]}}}\n"
                + "  - *r\n".repeat(600)));
        assertEquals(List.of(TOO_MANY_VALUES), refusedQuicklyInBoundedMemory("version: 1\nrules: &a [*a]\n"));
    }

    /**
     * A scalar is one node however long: a 300 KB text used through an alias 80,000 times (860 KB
     * of file) passed the node budget, and reading it ran out of memory quoting the text in each
     * use's error; a 60 KB token aliased 200 times was read for 30 s (review of the twenty-third
     * round). The characters of the expanded tree are bounded too.
     */
    @Test
    void aLongTextUsedThroughAliasesFailsFastWithAnError() {
        String text = "x".repeat(300_000);
        // parsing 860 KB of YAML allocates about 250 MB, whatever it holds; expanded, it was 24 GB
        assertEquals(List.of(TOO_MANY_CHARS), refusedQuicklyInBoundedMemory("version: 1\ns: &s '" + text + "'\nrules:\n"
                + "  - &r {name: r, limit: *s, window: 1s}\n" + "  - *r\n".repeat(80_000), 512));
        assertEquals(List.of(TOO_MANY_CHARS), refusedQuicklyInBoundedMemory("version: 1\nexempt:\n  header: X-T\n"
                + "  tokens: [&t '" + "t".repeat(60_000) + "'" + ", *t".repeat(200) + "]\n"));
    }

    static final String TOO_MANY_CHARS = "rules.yaml:1:1: the rule file's values hold more than 8388608 characters"
            + " once its aliases (*name) are expanded; write the values out instead";

    /** An error quoting a long text quotes its start and its length. */
    @Test
    void aLongTextInAnErrorIsQuotedShort() {
        List<String> errors = errors("version: 1\nrules:\n  - {name: r, limit: '" + "9x".repeat(100) + "', window: 1s}\n");
        assertEquals(1, errors.size(), errors::toString);
        assertTrue(errors.get(0).contains("'" + "9x".repeat(32) + "...' (200 characters)"), errors.get(0));
    }

    static final String TOO_MANY_VALUES = "rules.yaml:1:1: the rule file holds more than 1000000 values once its"
            + " aliases (*name) are expanded, or an alias is inside what it names; write the values out instead";

    /**
     * A merge key copies the merged mapping's entries as the file is read: a mapping of 100,000 keys
     * merged 300 times, in under 1 MB, took 17 s and 180 MB. The copying stops at 100,000 entries in
     * all, and the error points at the mapping merged.
     */
    @Test
    void mergeBombFailsFastWithAnError() {
        StringBuilder keys = new StringBuilder();
        for (int i = 0; i < 2_000; i++) {
            keys.append("k").append(i).append(": 1, ");
        }
        String bomb = "version: 1\nx: &d {" + keys + "z: 1}\ny:\n" + "  - {<<: *d}\n".repeat(200);
        assertEquals(List.of("rules.yaml:2:4: the rule file's merge keys (<<) copy more than 100000 entries in all;"
                + " this mapping is merged too often"), refusedQuicklyInBoundedMemory(bomb));
    }

    /** The errors of {@code yaml}, which must come within 5 seconds and 32 MB of allocation. */
    List<String> refusedQuicklyInBoundedMemory(String yaml) {
        return refusedQuicklyInBoundedMemory(yaml, 32);
    }

    /** The errors of {@code yaml}, which must come within 5 seconds and {@code megabytes} of allocation. */
    List<String> refusedQuicklyInBoundedMemory(String yaml, int megabytes) {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        return assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
            long before = threads.getCurrentThreadAllocatedBytes();
            List<String> errors = errors(yaml);
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            assertTrue(allocated < (long) megabytes << 20, "allocated " + (allocated >> 20) + " MB");
            return errors;
        });
    }

    /**
     * Anchors shared by many rules are ordinary: 22 rules merging defaults (<<: *d) or 25 sharing
     * methods: *m were refused as "more than 20 aliases". 200 rules sharing one anchor each way pass.
     */
    @Test
    void twoHundredRulesSharingOneAnchorAreAccepted() throws Exception {
        StringBuilder merged = new StringBuilder("version: 1\nrules:\n  - &d {name: r0, key: client-ip, limit: 100,"
                + " window: 1m, match: {http: {path: /r0, methods: &m [GET, POST]}}}\n");
        StringBuilder listed = new StringBuilder(merged);
        for (int i = 1; i < 200; i++) {
            merged.append("  - {<<: *d, name: r").append(i).append(", match: {http: {path: /r").append(i).append("}}}\n");
            listed.append("  - {name: r").append(i).append(", limit: 100, window: 1m, match: {http: {path: /r")
                    .append(i).append(", methods: *m}}}\n");
        }
        RuleSet byMerge = parse(merged.toString());
        assertEquals(200, byMerge.rules().size());
        assertEquals(100, byMerge.rules().get(199).limits().get(0).limit());
        RuleSet byList = parse(listed.toString());
        assertEquals(200, byList.rules().size());
        assertEquals(List.of("/r199"), byList.rules().get(199).httpMatch().paths());
        assertTrue(byList.rules().get(199).httpMatch().methods().contains("POST"));
    }

    @Test
    void notUtf8() throws Exception {
        Path file = dir.resolve("latin1.yaml");
        Files.write(file, "version: 1\n# caf\u00e9\n".getBytes(StandardCharsets.ISO_8859_1));
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(file, ENV));
        // where the first byte that is not UTF-8 is, not the whole file's 1:1 (the reload review)
        assertEquals(List.of(file + ":2:6: the rule file is not valid UTF-8 text from here: save it as UTF-8"),
                e.errors().stream().map(ConfigError::format).collect(Collectors.toList()));
        // the column counts characters, as an editor does, not bytes: an emoji (two UTF-16 units,
        // four bytes) and a u-umlaut (two bytes) before it are two columns
        byte[] valid = "version: 1\nrules: []\n# \uD83D\uDE00\u00fc".getBytes(StandardCharsets.UTF_8);
        byte[] bytes = java.util.Arrays.copyOf(valid, valid.length + 2);
        bytes[valid.length] = (byte) 0xff;
        bytes[valid.length + 1] = '\n';
        Files.write(file, bytes);
        ConfigException emoji = assertThrows(ConfigException.class, () -> ConfigLoader.load(file, ENV));
        assertEquals(List.of(file + ":3:5: the rule file is not valid UTF-8 text from here: save it as UTF-8"),
                emoji.errors().stream().map(ConfigError::format).collect(Collectors.toList()));
        // lines end at a lone CR as at LF and CR LF, as YAML counts them (the claims audit: 1:30)
        Files.write(file, "version: 1\rrules:\r\n  - name: a\u00ffb\r".getBytes(StandardCharsets.ISO_8859_1));
        ConfigException cr = assertThrows(ConfigException.class, () -> ConfigLoader.load(file, ENV));
        assertEquals(List.of(file + ":3:12: the rule file is not valid UTF-8 text from here: save it as UTF-8"),
                cr.errors().stream().map(ConfigError::format).collect(Collectors.toList()));
    }

    @Test
    void utf8WithByteOrderMarkIsAccepted() throws Exception {
        Path file = dir.resolve("bom.yaml");
        Files.writeString(file, "\uFEFFversion: 1\n# caf\u00e9\n");
        assertEquals(1, ConfigLoader.load(file, ENV).version());
    }

    @Test
    void fileOverOneMegabyteIsRefusedBeforeParsing() throws Exception {
        Path file = dir.resolve("huge.yaml");
        Files.writeString(file, "version: 1\n" + "#".repeat(1024 * 1024) + "\n");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(file, ENV));
        assertEquals(1, e.errors().size());
        ConfigError error = e.errors().get(0);
        assertEquals(1, error.line());
        assertEquals(1, error.column());
        assertTrue(error.format().startsWith(file + ":1:1: the rule file is "), error.format());
        assertTrue(error.message().contains("limited to 1 MB"), error.message());
    }

    /**
     * A device as the rule file or a token file is read no further than the size limits, and a
     * pipe can be read (check <(envsubst < rules.yaml)). /dev/zero reports size 0, and reading
     * "all" of it once ended in OutOfMemoryError: a stack trace from check, "could not start"
     * under -javaagent.
     */
    @Test
    void devicesAreReadNoFurtherThanTheLimitsAndPipesCanBeRead() throws Exception {
        Path zero = Path.of("/dev/zero");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(zero, ENV));
        assertEquals(zero + ":1:1: the rule file is larger than 1 MB; rule files are limited to 1 MB",
                e.errors().get(0).format());

        Path rules = dir.resolve("tokens.yaml");
        Files.writeString(rules, "version: 1\nexempt:\n  header: X-Token\n  tokens:\n    - ${file:/dev/zero}\n");
        ConfigException tokens = assertThrows(ConfigException.class, () -> ConfigLoader.load(rules, ENV));
        assertEquals(List.of(rules + ":5:7: token file /dev/zero is not a regular file (a pipe, a device or a"
                + " directory); it must be a file holding just the token"),
                tokens.errors().stream().map(ConfigError::format).collect(Collectors.toList()));

        // a token file that is a FIFO: opening it waited for a writer, for good, at start-up too
        Path tokenFifo = dir.resolve("token.fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", tokenFifo.toString()).start().waitFor());
        Files.writeString(rules, "version: 1\nexempt:\n  header: X-Token\n  tokens:\n    - ${file:token.fifo}\n");
        ConfigException fifoToken = assertTimeoutPreemptively(Duration.ofSeconds(10),
                () -> assertThrows(ConfigException.class, () -> ConfigLoader.load(rules, ENV)));
        assertEquals(List.of(rules + ":5:7: token file token.fifo is not a regular file (a pipe, a device or a"
                + " directory); it must be a file holding just the token"),
                fifoToken.errors().stream().map(ConfigError::format).collect(Collectors.toList()));

        Path fifo = dir.resolve("rules.fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        Thread writer = new Thread(() -> {
            try {
                Files.writeString(fifo, "version: 1\nrules:\n  - name: piped\n    limit: 3\n    window: 1s\n");
            } catch (java.io.IOException ignored) {
                // the read below fails then
            }
        });
        writer.start();
        RuleSet piped = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> ConfigLoader.load(fifo, ENV));
        assertEquals("piped", piped.rules().get(0).name());
        writer.join();
    }

    /**
     * A rule's limits are told apart by their windows (policy names, Redis keys): two in one
     * window once shared one Redis counter, and every call counted twice on it.
     */
    @Test
    void twoLimitsOfOneRuleInOneWindowAreRefused() {
        assertEquals(List.of("rules.yaml:6:29: two limits of this rule have the window 1m; give each window one limit"),
                errors("version: 1\nrules:\n  - name: r\n    limits:\n      - {limit: 5, window: 1m}\n"
                        + "      - {limit: 10, window: 60s}\n"));
    }

    @Test
    void missingFile() {
        Path file = dir.resolve("nope.yaml");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(file, ENV));
        assertEquals(file + ":1:1: the rule file does not exist", e.errors().get(0).format());
        ConfigException directory = assertThrows(ConfigException.class, () -> ConfigLoader.load(dir, ENV));
        assertEquals(dir + ":1:1: is a directory, not a rule file", directory.errors().get(0).format());
    }
}
