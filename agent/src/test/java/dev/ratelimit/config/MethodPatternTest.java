package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MethodPatternTest {

    @Test
    void exactName() {
        MethodPattern pattern = MethodPattern.parse("com.example.chat.MessageService#send");
        assertTrue(pattern.matchesClass("com.example.chat.MessageService"));
        assertFalse(pattern.matchesClass("com.example.chat.MessageServiceImpl"));
        assertFalse(pattern.matchesClass("comXexample.chat.MessageService"), "dots are literal");
        assertTrue(pattern.matchesMethod("send"));
        assertFalse(pattern.matchesMethod("sendAll"));
        assertEquals("com.example.chat.MessageService#send", pattern.toString());
    }

    @Test
    void nestedClassesUseBinaryNames() {
        MethodPattern pattern = MethodPattern.parse("com.example.Outer$Inner#run");
        assertTrue(pattern.matchesClass("com.example.Outer$Inner"));
        assertFalse(pattern.matchesClass("com.example.Outer"));
    }

    /**
     * A canonical nested name ({@code Outer.Inner}) is a valid pattern that matches no class when
     * Outer is a class: the hint says what to write (the review of the thirty-eighth round).
     */
    @Test
    void aCanonicalNestedNameGetsAHint() {
        MethodPattern pattern = MethodPattern.parse("com.example.Outer.Inner#run");
        assertFalse(pattern.matchesClass("com.example.Outer$Inner"));
        assertEquals("if com.example.Outer is a class, write its nested class as com.example.Outer$Inner#run",
                pattern.nestedClassHint());
        assertEquals("if app.A is a class, write its nested class as app.A$B$*#get*",
                MethodPattern.parse("app.A.B.*#get*").nestedClassHint());
        for (String plain : new String[] {"com.example.Outer$Inner#run", "com.acme.*Service#get*",
            "**.ReportService#build", "Top#run", "com.acme.svc.**.Api#*"}) {
            assertEquals(null, MethodPattern.parse(plain).nestedClassHint(), plain);
        }
    }

    @Test
    void starStaysWithinOneSegment() {
        MethodPattern pattern = MethodPattern.parse("com.acme.*Service#get*");
        assertTrue(pattern.matchesClass("com.acme.UserService"));
        assertTrue(pattern.matchesClass("com.acme.Service"));
        assertFalse(pattern.matchesClass("com.acme.web.UserService"));
        assertFalse(pattern.matchesClass("com.acme.UserServiceImpl"), "the text before the star is not enough");
        assertFalse(pattern.matchesClass("org.acme.UserService"), "nor is the text after it");
        assertTrue(pattern.matchesMethod("get"));
        assertTrue(pattern.matchesMethod("getUser"));
        assertFalse(pattern.matchesMethod("findUser"));
        assertTrue(MethodPattern.parse("com.*.Service#x").matchesClass("com.acme.Service"));
        assertFalse(MethodPattern.parse("com.*.Service#x").matchesClass("com.a.b.Service"));
    }

    @Test
    void doubleStarMatchesAnyPackagePrefix() {
        MethodPattern leading = MethodPattern.parse("**.ReportService#build");
        assertTrue(leading.matchesClass("com.acme.web.ReportService"));
        assertTrue(leading.matchesClass("ReportService"));
        assertFalse(leading.matchesClass("com.acme.web.MyReportService"));

        MethodPattern middle = MethodPattern.parse("com.acme.**.Service#x");
        assertTrue(middle.matchesClass("com.acme.Service"));
        assertTrue(middle.matchesClass("com.acme.a.b.Service"));
        assertFalse(middle.matchesClass("com.acmex.Service"));
        assertFalse(middle.matchesClass("org.acme.Service"));

        MethodPattern trailing = MethodPattern.parse("com.acme.**#x");
        assertTrue(trailing.matchesClass("com.acme.Service"));
        assertTrue(trailing.matchesClass("com.acme.a.Service"));
        assertFalse(trailing.matchesClass("com.acme"));
        assertFalse(trailing.matchesClass("com.other.Service"));
    }

    @Test
    void constructorsAreRefused() {
        for (String text : new String[] {"com.x.A#<init>", "com.x.A#<clinit>"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MethodPattern.parse(text));
            assertTrue(e.getMessage().contains("constructors"), e.getMessage());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "com.x.A", "#run", "com.x.A#", "com.x.A#a#b", "com..A#run", ".A#run", "com.x.#run",
        "com.x.A**#run", "com.x.A#ru n", "com.x.A#run()", "com/x/A#run", "**#run", "*#run", "**.*#run", "*.*#*"})
    void refusesInvalidPatterns(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MethodPattern.parse(text));
        assertTrue(e.getMessage().contains("method pattern"), e.getMessage());
    }

    @Test
    void equalityFollowsTheText() {
        assertEquals(MethodPattern.parse("a.B#c"), MethodPattern.parse("a.B#c"));
        assertFalse(MethodPattern.parse("a.B#c").equals(MethodPattern.parse("a.B#d")));
    }
}
