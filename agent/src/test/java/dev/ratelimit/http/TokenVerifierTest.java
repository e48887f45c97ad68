package dev.ratelimit.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.ExemptConfig;
import dev.ratelimit.config.TokenSource;
import dev.ratelimit.http.TokenVerifier.Verdict;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TokenVerifierTest {

    static final String TOKEN = "internal-Token-7f3a9c1e2b";
    static final String ROTATED = "rotated-Token-4d8e2a6b0c";
    static final String BY_DIGEST = "digest-Token-91b7d3e5a0";

    static final TokenVerifier VERIFIER = new TokenVerifier(exempt("""
            version: 1
            exempt:
              header: X-Internal-Token
              tokens:
                - ${env:CURRENT}
                - ${env:NEXT}
                - sha256:%s
            """.formatted(HexFormat.of().formatHex(sha256(BY_DIGEST)))));

    static ExemptConfig exempt(String yaml) {
        try {
            return ConfigLoader.parse(yaml, "rules.yaml", Path.of("."), Map.of("CURRENT", TOKEN, "NEXT", ROTATED)::get)
                    .exempt();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    static byte[] sha256(String token) {
        return TokenSource.sha256(token.getBytes(StandardCharsets.UTF_8));
    }

    static Verdict verify(String... values) {
        return VERIFIER.verify(Arrays.asList(values));
    }

    @Test
    void absentHeaderIsNone() {
        assertEquals(Verdict.NONE, VERIFIER.verify(List.of()));
        assertEquals(Verdict.NONE, VERIFIER.verify(null));
    }

    @Test
    void disabledExemptIsAlwaysNone() {
        TokenVerifier disabled = new TokenVerifier(exempt("version: 1\n"));
        assertEquals(Verdict.NONE, disabled.verify(List.of()));
        assertEquals(Verdict.NONE, disabled.verify(List.of(TOKEN)));
        assertEquals(Verdict.NONE, disabled.verify(List.of("forged")));
        assertEquals(Verdict.NONE, disabled.verify(List.of(TOKEN, TOKEN)));
    }

    @Test
    void configuredTokensAreValid() {
        assertEquals(Verdict.VALID, verify(TOKEN));
        assertEquals(Verdict.VALID, verify(ROTATED), "the second token, for rotation");
        assertEquals(Verdict.VALID, verify(BY_DIGEST), "a token configured by its digest");
    }

    @Test
    void surroundingWhitespaceIsTrimmed() {
        assertEquals(Verdict.VALID, verify(" " + TOKEN));
        assertEquals(Verdict.VALID, verify(TOKEN + " \t"));
        assertEquals(Verdict.VALID, verify("\t " + ROTATED + " "));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "\t", "wrong", "internal-Token-7f3a9c1e2", "nternal-Token-7f3a9c1e2b",
            "internal-Token-7f3a9c1e2bX", "Xinternal-Token-7f3a9c1e2b", "INTERNAL-TOKEN-7F3A9C1E2B",
            "internal-token-7f3a9c1e2b", "internal-Token-7f3a9c1e2b\u0000", "internal-Token-7f3a9c1e2b\r\n",
            "internal-\tToken-7f3a9c1e2b", "internal-Token\u007f-7f3a9c1e2b",
            "internal-Token-7f3a9c1e2b,rotated-Token-4d8e2a6b0c", "internal-Token-7f3a9c1e2b, internal-Token-7f3a9c1e2b",
            "\"internal-Token-7f3a9c1e2b\"", "Bearer internal-Token-7f3a9c1e2b", "internal-Token-7f3a9c1e2b\u00a0",
            "sha256:0000", "internal Token 7f3a9c1e2b"})
    void anythingElseIsForged(String value) {
        assertEquals(Verdict.FORGED, verify(value));
    }

    @Test
    void theDigestItselfIsNotAToken() {
        assertEquals(Verdict.FORGED, verify(HexFormat.of().formatHex(sha256(BY_DIGEST))));
        assertEquals(Verdict.FORGED, verify("sha256:" + HexFormat.of().formatHex(sha256(BY_DIGEST))));
    }

    @Test
    void repeatedHeadersAreForgedEvenWhenOneIsValid() {
        assertEquals(Verdict.FORGED, verify(TOKEN, TOKEN));
        assertEquals(Verdict.FORGED, verify(TOKEN, ROTATED));
        assertEquals(Verdict.FORGED, verify("wrong", TOKEN));
        assertEquals(Verdict.FORGED, verify(TOKEN, ""));
        assertEquals(Verdict.FORGED, verify(TOKEN, "wrong"));
    }

    @Test
    void nullValueIsForged() {
        List<String> values = new ArrayList<>();
        values.add(null);
        assertEquals(Verdict.FORGED, VERIFIER.verify(values));
    }

    @Test
    void hugeValuesAreForged() {
        assertEquals(Verdict.FORGED, verify(TOKEN + "x".repeat(5000)));
        assertEquals(Verdict.FORGED, verify(" ".repeat(TokenVerifier.MAX_VALUE_CHARS) + TOKEN),
                "the cap applies before trimming, so padding cannot buy hashing work");
        assertEquals(Verdict.FORGED, verify("x".repeat(10_000_000)));
        assertEquals(Verdict.VALID, verify(" ".repeat(TokenVerifier.MAX_VALUE_CHARS - TOKEN.length()) + TOKEN),
                "up to the cap, padding is trimmed as usual");
    }

    /** The longest token a rule file accepts exempts its holder: the file and the check agree. */
    @Test
    void theLongestTokenTheRuleFileAcceptsIsValid() {
        String longest = "k".repeat(ExemptConfig.MAX_TOKEN_CHARS - 2) + "7Z";
        TokenVerifier verifier = new TokenVerifier(exempt(
                "version: 1\nexempt:\n  header: X-T\n  tokens:\n    - " + longest + "\n"));
        assertEquals(Verdict.VALID, verifier.verify(List.of(longest)));
        assertEquals(Verdict.FORGED, verifier.verify(List.of(longest + "7")));
    }

    @Test
    void verifierHoldsOnlyDigestsNeverPresentedValues() {
        for (Field field : TokenVerifier.class.getDeclaredFields()) {
            if (!Modifier.isStatic(field.getModifiers())) {
                assertTrue(field.getType() == boolean.class || field.getType() == byte[][].class, field.toString());
            }
        }
    }
}
