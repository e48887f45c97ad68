package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {

    @Test
    void parsesEveryUnit() {
        assertEquals(Duration.ofMillis(500), Durations.parse("500ms"));
        assertEquals(Duration.ofSeconds(1), Durations.parse("1s"));
        assertEquals(Duration.ofSeconds(30), Durations.parse("30s"));
        assertEquals(Duration.ofMinutes(1), Durations.parse("1m"));
        assertEquals(Duration.ofHours(1), Durations.parse("1h"));
        assertEquals(Duration.ofDays(1), Durations.parse("1d"));
        assertEquals(Duration.ofMillis(1), Durations.parse("1ms"));
        assertEquals(Duration.ofDays(366), Durations.parse("366d"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1", "ms", "1 s", " 1s", "1s ", "1.5s", "-1s", "+1s", "1S", "1sec", "1m30s",
        "1w", "0s", "0ms", "367d", "8785h", "999999999999999d", "9999999999999999999s", "1y"})
    void refusesEverythingElse(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Durations.parse(text));
        assertTrue(e.getMessage().contains("duration"), e.getMessage());
    }

    @Test
    void refusesNull() {
        assertThrows(IllegalArgumentException.class, () -> Durations.parse(null));
    }

    @Test
    void formatsInTheShortestForm() {
        assertEquals("500ms", Durations.format(Duration.ofMillis(500)));
        assertEquals("1500ms", Durations.format(Duration.ofMillis(1500)));
        assertEquals("1s", Durations.format(Duration.ofMillis(1000)));
        assertEquals("90s", Durations.format(Duration.ofSeconds(90)));
        assertEquals("1m", Durations.format(Duration.ofSeconds(60)));
        assertEquals("61m", Durations.format(Duration.ofMinutes(61)));
        assertEquals("1h", Durations.format(Duration.ofMinutes(60)));
        assertEquals("1d", Durations.format(Duration.ofHours(24)));
        assertEquals("36h", Durations.format(Duration.ofHours(36)));
        for (String text : new String[] {"500ms", "1s", "30s", "1m", "1h", "1d", "7d"}) {
            assertEquals(text, Durations.format(Durations.parse(text)));
        }
    }
}
