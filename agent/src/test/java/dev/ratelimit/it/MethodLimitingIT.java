package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent jar as a user runs it: a forked JVM per JDK started with
 * {@code -javaagent:target/rate-limit-agent.jar=config=...}, limiting fixture classes it has
 * never seen, through annotations (ours and an application's own) and YAML method patterns.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MethodLimitingIT {
    private final Map<Path, ForkedJvm.Result> runs = new ConcurrentHashMap<>();

    static Stream<Path> jdks() {
        return Jdks.all();
    }

    private ForkedJvm.Result run(Path jdk) {
        return runs.computeIfAbsent(jdk, home -> {
            try {
                Path rules = Path.of(MethodLimitingIT.class.getResource("/fixture-rules.yaml").toURI());
                ForkedJvm.Result result = ForkedJvm.run(home, List.of(
                        "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                        "-cp", ForkedJvm.applicationClassPath(),
                        "dev.ratelimit.fixture.FixtureMain",
                        "annotations", "patterns", "defaults", "enums", "shadow", "isolated", "nullName", "concurrency", "nesting",
                        "faults"),
                        Duration.ofMinutes(3));
                assertEquals(0, result.exitCode, result::toString);
                assertEquals("true", result.results().get("done"), result::toString);
                return result;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
    }

    private void expect(Path jdk, String name, String value) {
        ForkedJvm.Result result = run(jdk);
        assertEquals(value, result.results().get(name), () -> name + " on " + jdk + "\n" + result);
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void ourAnnotationWithInlineLimit(Path jdk) {
        expect(jdk, "greet.allowed", "3");
        expect(jdk, "greet.rejection.rule", "Greeter#greet");
        expect(jdk, "greet.rejection.retryAfterPositive", "true");
        expect(jdk, "greet.rejection.retryAfterAtMostWindow", "true");
        expect(jdk, "greet.rejection.stackTraceLength", "0");
        expect(jdk, "greet.rejection.bootstrapLoaded", "true");
        expect(jdk, "wrongRule", null);
    }

    /**
     * An interface's default and static methods are limited like a class's; an abstract one is
     * not (it has no body), and its annotation does not reach the implementation. Interfaces
     * were once passed over whole.
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void defaultAndStaticMethodsOfInterfaces(Path jdk) {
        expect(jdk, "interfaceDefault.allowed", "2");
        expect(jdk, "interfaceStatic.allowed", "1");
        expect(jdk, "interfaceAbstract.allowed", "5");
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void annotationNamingARuleAndYamlOverridingTheDefaultName(Path jdk) {
        expect(jdk, "named.allowed", "2");
        expect(jdk, "overridden.allowed", "2");
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void applicationsOwnAnnotationCounts(Path jdk) {
        expect(jdk, "own.allowed", "2");
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void listKeysKeepTuplesApart(Path jdk) {
        expect(jdk, "pair.ab.allowed", "2");
        expect(jdk, "pair.a_b.allowed", "2");
        expect(jdk, "pair.null.allowed", "2");
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void yamlPatternsKeyedOnArgumentProperties(Path jdk) {
        expect(jdk, "send.alice.allowed", "2");
        expect(jdk, "send.bob.allowed", "2");
        expect(jdk, "send.null.allowed", "2");
        expect(jdk, "send.bodiesRun", "6");
        expect(jdk, "sendRecord.carol.allowed", "1");
        expect(jdk, "sendRecord.dave.allowed", "1");
        expect(jdk, "sendRecord.nullCustomer.allowed", "1");
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void returnDefaultGivesEachReturnTypeItsDefault(Path jdk) {
        expect(jdk, "first", "real");
        expect(jdk, "anInt", "0");
        expect(jdk, "aLong", "0");
        expect(jdk, "aBoolean", "false");
        expect(jdk, "aDouble", "0.0");
        expect(jdk, "aChar", "0");
        expect(jdk, "aString", "null");
        expect(jdk, "anOptional", "empty");
        expect(jdk, "anOptionalInt", "empty");
        expect(jdk, "aList", "0");
        expect(jdk, "aSet", "0");
        expect(jdk, "aMap", "0");
        // an empty array and an empty collection of the declared class: they were null, where the
        // specification promises an empty collection (the SPEC audit of the thirty-seventh round)
        expect(jdk, "anArray", "[]");
        expect(jdk, "anArrayOfArrays", "[] [[Ljava.lang.String;");
        // an array of a type variable: null, as a type variable is (an empty Object[] or
        // CharSequence[][] failed the caller's cast: the review of the thirty-seventh round's commits)
        expect(jdk, "aGenericArray", "null");
        expect(jdk, "aBoundedGenericArrayOfArrays", "null");
        expect(jdk, "anArrayList", "1");
        expect(jdk, "aHashMap", "0");
        expect(jdk, "aNavigableMap", "0");
        expect(jdk, "aDeque", "0");
        expect(jdk, "aStream", "0");
        expect(jdk, "aBlockingQueue", "0");
        expect(jdk, "anIntStream", "0");
        expect(jdk, "aVector", "0");
        expect(jdk, "aTypeVariable", "null");
        expect(jdk, "aVoid.ran", "0");
    }

    /**
     * A limited call made from a limited call under the same rule is part of it and counts once:
     * an overload delegating to another, a method calling itself, an override calling super. An
     * inner call that throws still ends the outer one, and later calls count again. Before, each
     * level counted: a limit of 4 let 2 outer calls through, and the recursion none.
     */
    /**
     * A wildcard pattern over an enum limits the enum's own methods, not javac's {@code values()}
     * and {@code valueOf(String)}: the JDK calls those itself and caches what they return, so one
     * rejection broke every {@code switch}, {@code EnumSet} and {@code valueOf} of the enum.
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void aWildcardOverAnEnumLeavesItsGeneratedMethodsAlone(Path jdk) {
        expect(jdk, "enum.valueOf", "5");
        expect(jdk, "enum.values", "5");
        expect(jdk, "enum.allOfAndEnumMap", "10");
        expect(jdk, "enum.switch", "5");
        expect(jdk, "enum.label.allowed", "1");
        expect(jdk, "enum.valueOfAfterRejection", "ACTIVE");
    }

    /**
     * A wildcard pattern over a record limits the record's own methods, not its equals, hashCode,
     * toString and accessors: a HashSet of records threw the rejection from its third add. An
     * accessor annotated is limited by its annotation only: the pattern applied to it too, and its
     * calls spent the pattern's budget of the record's own methods (method review, fortieth round).
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void aWildcardOverARecordLeavesItsObjectMethodsAndAccessorsAlone(Path jdk) {
        expect(jdk, "record.distinct", "5");
        expect(jdk, "record.read", "5");
        expect(jdk, "record.annotatedAccessor.allowed", "3");
        expect(jdk, "record.manhattan.allowed", "1");
    }

    /**
     * A constructor annotated with an application's own annotation that allows it, and an
     * abstract method annotated with ours, are never limited: each is named in a warning, where
     * they were passed over without a word.
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void anAnnotatedConstructorOrAbstractMethodIsNamedInAWarning(Path jdk) {
        expect(jdk, "annotatedConstructor.calls", "3");
        ForkedJvm.Result result = run(jdk);
        assertTrue(result.stderr.contains("dev.ratelimit.fixture.Greeter#<init>(Ljava/lang/String;)V is annotated"
                + " dev.ratelimit.fixture.own.RateLimited, but it is a constructor, which is never limited"),
                result::toString);
        assertTrue(result.stderr.contains("dev.ratelimit.fixture.Api#name()Ljava/lang/String; is annotated"
                + " dev.ratelimit.annotation.RateLimited, but it is an abstract method, which is never limited"),
                result::toString);
        assertFalse(result.stderr.contains("Greeter#<init>()V"), result::toString);
    }

    /** An application's own classes in a com.sun. package (Jakarta Mail 1.x, Jersey 1) are limited. */
    @ParameterizedTest
    @MethodSource("jdks")
    void anApplicationsComSunClassesAreLimited(Path jdk) {
        expect(jdk, "comSun.annotation.allowed", "2");
        expect(jdk, "comSun.pattern.allowed", "3");
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void aCallInsideACallUnderTheSameRuleCountsOnce(Path jdk) {
        expect(jdk, "nesting.send.allowed", "4");
        expect(jdk, "nesting.send.bodies", "4");
        expect(jdk, "nesting.depth.allowed", "3");
        expect(jdk, "nesting.family.allowed", "2");
        expect(jdk, "nesting.fail.failedInside", "3");
        expect(jdk, "nesting.fail.rejected", "2");
        expect(jdk, "nesting.send.afterwards", "0");
    }

    /** Inside a call for one key, a call for another key is charged to that key. */
    @ParameterizedTest
    @MethodSource("jdks")
    void aCallInsideForAnotherKeyIsChargedToIt(Path jdk) {
        expect(jdk, "nesting.invite.ann", "2");
        expect(jdk, "nesting.invite.bobAfter", "0");
        expect(jdk, "nesting.invite.carol", "1");
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void shadowModeNeverRejects(Path jdk) {
        expect(jdk, "shadow.sum", "5");
        // and the rule was applied: the second call was over its limit of 1, and said so, once
        // (test audit: the sum alone held with the rule not bound at all)
        ForkedJvm.Result result = run(jdk);
        String line = "rule 'shadow' would reject (shadow mode) calls over";
        assertEquals(1, result.stderr.split(java.util.regex.Pattern.quote(line), -1).length - 1, result::toString);
        assertTrue(result.stderr.contains(line + " [1 per 1h]; 1 would have been rejected since these settings took effect"), result::toString);
    }

    /**
     * A web application's loader is collected once undeployed, also after the agent wove and
     * limited one of its methods: the agent's clock thread, started at the JVM's first decision
     * inside that method, kept the access control context it was made in (up to Java 23), and
     * with it the application's loader, for good (review of the twenty-fourth round).
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void anUndeployedApplicationsLoaderIsCollectedAfterItsMethodsWereLimited(Path jdk) throws Exception {
        Path rules = Path.of(MethodLimitingIT.class.getResource("/fixture-rules.yaml").toURI());
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.RedeployMain"), Duration.ofMinutes(2));
        assertEquals(0, result.exitCode, result::toString);
        Map<String, String> printed = result.results();
        assertEquals("true", printed.get("ownLoader"), result::toString);
        assertEquals("5", printed.get("allowed"), "limited, so woven: " + result);
        assertEquals("1", printed.get("rejected"), result::toString);
        assertEquals("true", printed.get("collected"), result::toString);
    }

    /**
     * As above, the calls made on a thread of a thread group whose class is the application's (a
     * framework's worker pool): the agent's clock thread, started by the first decision there,
     * joined that group, as a thread made without one does, and kept its class, and with it the
     * application's loader, for good.
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void anUndeployedApplicationsLoaderIsCollectedAfterItsOwnThreadGroupStartedTheAgentsThreads(Path jdk)
            throws Exception {
        Path rules = Path.of(MethodLimitingIT.class.getResource("/fixture-rules.yaml").toURI());
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.RedeployMain", "in-app-thread-group"), Duration.ofMinutes(2));
        assertEquals(0, result.exitCode, result::toString);
        Map<String, String> printed = result.results();
        assertEquals("true", printed.get("ownLoader"), result::toString);
        assertEquals("true", printed.get("groupOwnLoader"), result::toString);
        assertEquals("5", printed.get("allowed"), "limited, so woven: " + result);
        assertEquals("1", printed.get("rejected"), result::toString);
        assertEquals("true", printed.get("collected"), result::toString);
    }

    /**
     * A plugin with its own copy of the API jar (a child-first loader): its limited method's
     * rejection is thrown as the copy its caller knows, so both the host's catch (the agent's
     * copy) and the plugin's own (its copy) see it. The copy is noticed as the loader defines it.
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void aPluginsRejectionsReachTheHostsCatchAndItsOwn(Path jdk, @org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path rules = java.nio.file.Files.writeString(dir.resolve("plugin-rules.yaml"), String.join("\n",
                "version: 1", "rules:", "  - name: plugin-call", "    match:",
                "      method: dev.ratelimit.fixture.PluginService#call", "    limit: 1", "    window: 1h", ""));
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.PluginHostMain"), Duration.ofMinutes(2));
        assertEquals(0, result.exitCode, result::toString);
        Map<String, String> printed = result.results();
        assertEquals("true", printed.get("ownCopy"), result::toString);
        // the first call runs; the host's two others and every one of the plugin's are refused
        assertEquals("2", printed.get("hostCaught"), result::toString);
        assertEquals("0", printed.get("escaped"), result::toString);
        assertEquals("caught plugin-call;caught plugin-call;caught plugin-call;", printed.get("pluginSaw"),
                result::toString);
    }

    /**
     * A limited method the advice would take past the JVM's 64 KB for a method's code is left
     * unlimited, counted and named at error level, and its class's other limited method keeps its
     * limit: the whole class once ran unlimited.
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void aMethodTooLargeForTheAdviceLeavesItsClassesOtherMethodsLimited(Path jdk, @org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path classFile = dir.resolve("Big.class");
        java.nio.file.Files.write(classFile, dev.ratelimit.testing.LargeMethodClass.of("example/Big", 65_500));
        Path rules = Path.of(MethodLimitingIT.class.getResource("/fixture-rules.yaml").toURI());
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-DtooLarge.class=" + classFile,
                "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.FixtureMain", "tooLarge"),
                Duration.ofMinutes(1));
        assertEquals(0, result.exitCode, result::toString);
        Map<String, String> results = result.results();
        assertEquals("7", results.get("tooLarge.big.allowed"), result::toString);
        assertEquals("5", results.get("tooLarge.small.allowed"), result::toString);
        assertEquals("Big#small", results.get("tooLarge.rejection"), result::toString);
        assertEquals("1", results.get("transformationErrors"), result::toString);
        assertEquals("0", results.get("agentErrors"), result::toString);
        assertTrue(result.stderr.contains("could not limit example.Big#big()V"), result::toString);
    }

    /** A class defined with defineClass(null, ...) reaches the transformer without a name, and is limited all the same. */
    @ParameterizedTest
    @MethodSource("jdks")
    void aClassDefinedWithoutANameIsLimited(Path jdk) {
        expect(jdk, "nullName.allowed", "1");
        expect(jdk, "nullName.rejection", "NullNamed#get");
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void childLoaderWithPlatformParentIsLimited(Path jdk) {
        expect(jdk, "isolated.separateClass", "true");
        expect(jdk, "isolated.allowed", "2");
        expect(jdk, "isolated.rejection", "IsolatedService#work");
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void exactlyTheLimitPassesUnderConcurrencyForEveryAlgorithm(Path jdk) {
        for (String algorithm : List.of("fixed", "sliding", "bucket")) {
            expect(jdk, algorithm + ".rounds", "200");
            expect(jdk, algorithm + ".wrongRounds", "[]");
        }
    }

    /**
     * The same race on virtual threads, 100 released at once per round against a limit of 5, on
     * a JDK that has them (21 and later; the build's 25): exactly 5 pass, every round, for each
     * algorithm. On an older JDK the fixture says it has none (the concurrency audit found no
     * latch test of virtual threads under the agent).
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void exactlyTheLimitPassesOnVirtualThreadsForEveryAlgorithm(Path jdk) {
        int feature = Integer.parseInt(run(jdk).results().get("java.feature"));
        for (String algorithm : List.of("fixed", "sliding", "bucket")) {
            expect(jdk, "virtual." + algorithm + ".rounds", feature >= 21 ? "200" : null);
            expect(jdk, "virtual." + algorithm + ".wrongRounds", feature >= 21 ? "[]" : null);
        }
    }

    /** 100 threads released at once on a call that makes a call under the same rule: exactly 5 pass. */
    @ParameterizedTest
    @MethodSource("jdks")
    void exactlyTheLimitPassesUnderConcurrencyWhenCallsNest(Path jdk) {
        expect(jdk, "nesting.race.rounds", "200");
        expect(jdk, "nesting.race.wrongRounds", "[]");
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void anAgentErrorLetsTheCallThroughIsCountedAndLoggedOnce(Path jdk) {
        expect(jdk, "faulty.sum", "21");
        expect(jdk, "faulty.agentErrors", "3");
        // the faults scenario is the only source of agent errors in this run
        expect(jdk, "agentErrors", "3");
        String stderr = run(jdk).stderr;
        assertEquals(1, count(stderr, "internal error while limiting a method call"), stderr);
    }

    /**
     * Classes of a loader that cannot see the bridge (JBoss Modules, OSGi, an application's own
     * walled loader) run unlimited, counted and named once in the log with the setting that lets
     * them be limited; woven, each call threw NoClassDefFoundError (review of the twenty-third
     * round). A JVM of its own: the main run counts no transformation error.
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void classesOfALoaderThatCannotSeeTheBridgeRunUnlimited(Path jdk) throws Exception {
        Path rules = Path.of(MethodLimitingIT.class.getResource("/fixture-rules.yaml").toURI());
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-Dwalled.servletApi=" + Path.of(jakarta.servlet.GenericServlet.class.getProtectionDomain()
                        .getCodeSource().getLocation().toURI()),
                "-cp", ForkedJvm.applicationClassPath(),
                "dev.ratelimit.fixture.FixtureMain", "walled"),
                Duration.ofMinutes(2));
        assertEquals(0, result.exitCode, result::toString);
        Map<String, String> results = result.results();
        assertEquals("[]", results.get("walled.thrown"), result::toString);
        assertEquals("4", results.get("walled.allowed"), result::toString);
        assertEquals("4", results.get("walled.served"), result::toString);
        assertEquals("2", results.get("walled.transformationErrors"), result::toString);
        assertEquals(1, count(result.stderr, "cannot see the package dev.ratelimit.bootstrap"), result::toString);
        assertTrue(result.stderr.contains("-Djboss.modules.system.pkgs=dev.ratelimit"), result::toString);
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void noClassFailedToInstrument(Path jdk) {
        expect(jdk, "transformationErrors", "0");
        ForkedJvm.Result result = run(jdk);
        assertFalse(result.stderr.contains("could not instrument"), result::toString);
        assertFalse(result.stderr.contains("sun.misc.Unsafe"), result::toString);
    }

    private static int count(String text, String fragment) {
        int count = 0;
        for (int at = text.indexOf(fragment); at >= 0; at = text.indexOf(fragment, at + 1)) {
            count++;
        }
        return count;
    }
}
