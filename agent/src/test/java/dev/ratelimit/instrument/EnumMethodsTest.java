package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ratelimit.fixture.Status;
import java.util.Set;
import java.util.TreeSet;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import org.junit.jupiter.api.Test;

/** Which methods of an enum a wildcard pattern leaves alone: those its compiler wrote. */
class EnumMethodsTest {
    private static Set<String> generated(Class<?> type) {
        TypeDescription description = TypeDescription.ForLoadedType.of(type);
        Set<String> names = new TreeSet<>();
        for (MethodDescription.InDefinedShape method : description.getDeclaredMethods()) {
            if (LimitedMethodTransformer.generatedForEnum(description, method)) {
                names.add(method.getName() + method.getDescriptor());
            }
        }
        return names;
    }

    @Test
    void javacsValuesAndValueOf() {
        assertEquals(Set.of("values()[Ldev/ratelimit/fixture/Status;",
                "valueOf(Ljava/lang/String;)Ldev/ratelimit/fixture/Status;"), generated(Status.class));
    }

    /** Kotlin adds getEntries(); a static valueOf(int) of the application's own is limitable. */
    @Test
    void kotlincsValuesValueOfAndEntries() throws ClassNotFoundException {
        Class<?> tier = Class.forName("dev.ratelimit.fixture.Tier");
        assertEquals(Set.of("values()[Ldev/ratelimit/fixture/Tier;",
                "valueOf(Ljava/lang/String;)Ldev/ratelimit/fixture/Tier;",
                "getEntries()Lkotlin/enums/EnumEntries;"), generated(tier));
    }

    /** A class that is not an enum keeps every method, whatever its name. */
    @Test
    void aClassThatIsNotAnEnum() {
        assertEquals(Set.of(), generated(Lookalike.class));
    }

    static final class Lookalike {
        static Lookalike[] values() {
            return new Lookalike[0];
        }

        static Lookalike valueOf(String name) {
            return new Lookalike();
        }
    }
}
