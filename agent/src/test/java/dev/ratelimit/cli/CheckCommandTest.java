package dev.ratelimit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckCommandTest {

    static final String FILE_TOKEN = "checkFileToken-5a1c9e77";
    static final String LITERAL_TOKEN = "checkLiteralToken-0b2d4f";

    @TempDir
    Path dir;

    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();

    int run(Path file) {
        return CheckCommand.run(file.toString(), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void validFilePrintsEachRuleAsUnderstoodAndNoTokens() throws Exception {
        Files.writeString(dir.resolve("token"), FILE_TOKEN + "\n");
        Path file = dir.resolve("ratelimit.yaml");
        Files.writeString(file, """
                version: 1
                exempt:
                  header: X-Internal-Token
                  tokens:
                    - ${file:token}
                    - %s
                client:
                  trusted-proxies: [127.0.0.1/32, 10.0.0.0/8]
                rules:
                  - name: api-per-ip
                    match:
                      http:
                        path: /api/**
                        methods: [GET, POST]
                    key: client-ip
                    limit: 300
                    window: 1m
                  - name: report-export
                    key: principal
                    limit: 10
                    window: 1h
                """.formatted(LITERAL_TOKEN));

        assertEquals(0, run(file));
        assertEquals("", err());
        assertEquals(String.join(System.lineSeparator(),
                file + ": OK (version 1, 2 rules)",
                "exempt: header X-Internal-Token, tokens file:token, literal",
                "client: trusted-proxies 127.0.0.1/32, 10.0.0.0/8; ipv6-prefix 64",
                "store: local, max-keys 100000, on-error allow",
                "rules:",
                "  api-per-ip: http [GET, POST] /api/** by client-ip: 300 per 1m, fixed-window, enforce",
                "  report-export: named by principal: 10 per 1h, fixed-window, enforce",
                ""), out());
        assertFalse(out().contains(FILE_TOKEN));
        assertFalse(out().contains(LITERAL_TOKEN));
    }

    /** A header name that looks like a token is not printed, and check says why. */
    @Test
    void aHeaderThatLooksLikeATokenIsNotPrinted() throws Exception {
        String hex = "3f9a7c1e2b4d6f8a0c2e4b6d8f0a1c3e";
        Path file = dir.resolve("pasted.yaml");
        Files.writeString(file, "version: 1\nexempt:\n  header: " + hex + "\n  tokens:\n    - " + LITERAL_TOKEN + "\n");
        assertEquals(0, run(file));
        assertTrue(out().contains("exempt: header (32 characters, not shown: it looks like a token), tokens literal"), out());
        assertTrue(err().contains(file + ": warning: exempt.header looks like a token"), err());
        assertFalse(out().contains(hex) || err().contains(hex), out() + err());
    }

    /** A canonical nested name passes, with a warning saying what to write. */
    @Test
    void aCanonicalNestedNameIsValidWithAWarning() throws Exception {
        Path file = dir.resolve("nested.yaml");
        Files.writeString(file, "version: 1\nrules:\n  - name: n\n    match: {method: com.acme.Outer.Inner#run}\n"
                + "    limit: 1\n    window: 1s\n  - name: fine\n    match: {method: com.acme.Outer$Inner#run}\n"
                + "    limit: 1\n    window: 1s\n");
        assertEquals(0, run(file));
        assertEquals(file + ": warning: rule 'n' names com.acme.Outer.Inner#run: class names are binary names; if"
                + " com.acme.Outer is a class, write its nested class as com.acme.Outer$Inner#run\n", err().replace("\r", ""));
    }

    @Test
    void emptyRuleListAndSingularCount() throws Exception {
        Path file = dir.resolve("none.yaml");
        Files.writeString(file, "version: 1\n");
        assertEquals(0, run(file));
        assertTrue(out().startsWith(file + ": OK (version 1, 0 rules)"), out());
        assertTrue(out().contains("exempt: none"), out());
        assertTrue(out().contains("rules: none"), out());

        Path one = dir.resolve("one.yaml");
        Files.writeString(one, "version: 1\nrules:\n  - name: a\n    limit: 1\n    window: 1s\n");
        out.reset();
        assertEquals(0, run(one));
        assertTrue(out().startsWith(one + ": OK (version 1, 1 rule)"), out());
    }

    @Test
    void invalidFilePrintsEveryErrorToErrAndExitsOne() throws Exception {
        Path file = dir.resolve("bad.yaml");
        Files.writeString(file, """
                version: 1
                exempt:
                  header: X-Internal-Token
                  tokens: [tooShortSecret]
                rules:
                  - name: a
                    limt: 5
                    window: 1s
                """);
        assertEquals(1, run(file));
        assertEquals("", out());
        String[] lines = err().split("\\R");
        // limt is reported once, as a misspelling of limit, not again as a missing limit
        assertEquals(2, lines.length, err());
        assertTrue(lines[0].startsWith(file + ":4:12: this literal token is too short"), lines[0]);
        assertTrue(lines[1].startsWith(file + ":7:5: unknown key 'limt' (did you mean 'limit'?)"), lines[1]);
        assertFalse(err().contains("tooShortSecret"));
        assertFalse(err().contains("Exception"), "no stack trace");
    }

    @Test
    void missingFile() {
        assertEquals(1, run(dir.resolve("missing.yaml")));
        assertEquals(dir.resolve("missing.yaml") + ":1:1: the rule file does not exist" + System.lineSeparator(), err());
    }

    /**
     * A trusted-proxies block that covers every address lets any client choose its client-ip key:
     * valid, but said (review of the thirty-third round); a file without one says nothing.
     */
    @Test
    void trustingEveryAddressIsWarnedAbout() throws Exception {
        Path file = Files.writeString(dir.resolve("open.yaml"), "version: 1\nclient:\n  trusted-proxies: [10.0.0.0/8,"
                + " 0.0.0.0/0, \"::/0\"]\nrules: []\n");
        assertEquals(0, run(file));
        assertEquals(file + ": warning: client.trusted-proxies trusts every address (0.0.0.0/0, ::/0): any client can"
                + " choose its client-ip key through X-Forwarded-For or Forwarded, and so its budget; list only your"
                + " proxies' addresses\n", err().replace(System.lineSeparator(), "\n"));
        out.reset();
        err.reset();
        assertEquals(0, run(Files.writeString(dir.resolve("closed.yaml"),
                "version: 1\nclient:\n  trusted-proxies: [10.0.0.0/8, \"::1/128\"]\nrules: []\n")));
        assertEquals("", err());
    }
}
