package dev.ratelimit.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ratelimit.bootstrap.RequestContext;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.RequestKeys;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CredentialKeysTest {
    @AfterEach
    void clear() {
        RequestContext.set(null);
    }

    private static String credentials(String value) throws Exception {
        Method m = RequestFacts.class.getDeclaredMethod("credentials", String.class);
        m.setAccessible(true);
        return (String) m.invoke(null, value);
    }

    /** Base64 spellings java.util.Base64 (Spring Security's Basic converter) decodes to one user:password. */
    @Test
    void oneBasicCredentialIsOneKey() throws Exception {
        byte[] user = "user:pass1".getBytes(StandardCharsets.UTF_8);
        String canonical = "Basic dXNlcjpwYXNzMQ==";
        for (String spelling : new String[] {"Basic dXNlcjpwYXNzMQ", "Basic dXNlcjpwYXNzMR==", "Basic dXNlcjpwYXNzMf=="}) {
            assertArrayEquals(user, Base64.getDecoder().decode(spelling.substring(6)), spelling);
            assertEquals(credentials(canonical), credentials(spelling), spelling);
        }
    }

    /** README: `Bearer x`, `bearer x` and `BEARER   x` are one key. Not when exempt.header is Authorization. */
    @Test
    void schemeSpellingsAreOneKeyWhenTheExemptHeaderIsAuthorization() throws Exception {
        RuleSet ruleSet = ConfigLoader.parse(String.join("\n",
                "version: 1",
                "exempt:",
                "  header: Authorization",
                "  tokens: [\"internal-token-0123456789abcdef\"]",
                "rules:",
                "  - name: per-credential",
                "    match: {http: {path: /api/**}}",
                "    key: header:Authorization",
                "    limit: 2",
                "    window: 1h",
                "    exempt: false",
                ""), "rules.yaml", Path.of("."), name -> null);
        List<ActiveRule> http = new ArrayList<>();
        for (RuleConfig config : ruleSet.rules()) {
            http.add(new ActiveRule(config, 1000));
        }
        HttpRules httpRules = new HttpRules(ruleSet, http, n -> null);
        HttpRequests gate = new HttpRequests(() -> httpRules);
        String a = key(gate, "Bearer user-token-xyz");
        String b = key(gate, "bearer user-token-xyz");
        String c = key(gate, "BEARER   user-token-xyz");
        assertEquals(a, b);
        assertEquals(a, c);
    }

    private static String key(HttpRequests gate, String value) throws Exception {
        RequestContext.set(null);
        FakeServlet servlet = new FakeServlet("jakarta.servlet").header("Authorization", value);
        servlet.uri = "/about";
        return ((RequestKeys) gate.enter(servlet.request, servlet.response)).header("Authorization");
    }
}
