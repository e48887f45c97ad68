package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.OnError;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.store.LimiterFactory;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class RuleBookTest {

    /** What the inline rule of an annotated method does when its store fails, under this store section. */
    private static OnError inlineRuleOnError(String store) throws Exception {
        RuleSet rules = ConfigLoader.parse("version: 1\n" + store + "rules: []\n", "r.yaml", Path.of("."), name -> null);
        RuleBook book = new RuleBook(rules, LimiterFactory.of(rules.store()), null, () -> { });
        MethodSite site = new MethodSite(1, "app.ReportService", "export", "ReportService", false,
                new MethodSite.AnnotationValues("", 5, "1s", "global"));
        return book.rulesFor(site)[0].config().onError();
    }

    /** An inline rule does what store.on-error says, as every rule of the file does by default. */
    @Test
    void inlineRulesFollowTheStoresOnError() throws Exception {
        assertEquals(OnError.REJECT, inlineRuleOnError("store:\n  on-error: reject\n"));
        assertEquals(OnError.ALLOW, inlineRuleOnError("store:\n  on-error: allow\n"));
        assertEquals(OnError.ALLOW, inlineRuleOnError(""));
    }
}
