package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class KeySpecTest {

    @Test
    void singleKeys() {
        KeySpec global = KeySpec.parse("global");
        assertTrue(global.isGlobal());
        assertFalse(global.usesRequest());
        assertFalse(global.usesArguments());
        assertEquals(global, KeySpec.global());

        KeySpec ip = KeySpec.parse("client-ip");
        assertEquals(KeyPart.Kind.CLIENT_IP, ip.parts().get(0).kind());
        assertTrue(ip.usesRequest());
        assertFalse(ip.isGlobal());
        assertTrue(KeySpec.parse("principal").usesRequest());

        KeyPart header = KeySpec.parse("header:X-Tenant").parts().get(0);
        assertEquals(KeyPart.Kind.HEADER, header.kind());
        assertEquals("X-Tenant", header.headerName());
        assertTrue(KeySpec.parse("header:X-Tenant").usesRequest());
    }

    @Test
    void argumentKeys() {
        KeyPart plain = KeyPart.parse("arg0");
        assertEquals(KeyPart.Kind.ARGUMENT, plain.kind());
        assertEquals(0, plain.argumentIndex());
        assertEquals(List.of(), plain.propertyPath());
        KeyPart nested = KeyPart.parse("arg254.user.id_2$");
        assertEquals(254, nested.argumentIndex());
        assertEquals(List.of("user", "id_2$"), nested.propertyPath());
        assertEquals("arg254.user.id_2$", nested.toString());
        // identifiers are read by code point: U+1D465 (outside the BMP) is a Java letter, U+1D7CE a digit
        assertEquals(List.of("\uD835\uDC65\uD835\uDFCE"),
                KeyPart.parse("arg0.\uD835\uDC65\uD835\uDFCE").propertyPath());
        assertThrows(IllegalArgumentException.class, () -> KeyPart.parse("arg0.\uD835\uDFCE"));
        assertThrows(IllegalArgumentException.class, () -> KeyPart.parse("arg0.x\uD83D\uDE00"));
        KeySpec spec = KeySpec.parse("arg0.userId");
        assertTrue(spec.usesArguments());
        assertFalse(spec.usesRequest());
        assertEquals("arg0.userId", spec.toString());
    }

    @Test
    void listsInOrder() {
        KeySpec spec = KeySpec.parse("client-ip, header:X-Tenant");
        assertEquals(KeySpec.of(List.of("client-ip", "header:X-Tenant")), spec);
        assertEquals("[client-ip, header:X-Tenant]", spec.toString());
        assertTrue(spec.usesRequest());
        assertFalse(spec.isGlobal());
        assertTrue(KeySpec.parse("principal,arg1").usesArguments());
        assertTrue(KeySpec.parse("arg1,header:X-Tenant").usesRequest());
        assertFalse(KeySpec.parse("arg1").usesRequest());
        assertFalse(KeySpec.parse("client-ip,principal").usesArguments());
        assertFalse(KeySpec.parse("principal,arg1")
                .equals(KeySpec.parse("arg1,principal")), "order matters");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "ip", "Client-IP", "header:", "header:X Tenant", "header:X:Y", "arg", "arg-1",
        "arg01", "arg255", "arg1000", "arg0.", "arg0..x", "arg0.1x", "arg0.a-b", "argument0", "global,global",
        "global, client-ip", "client-ip,", ",client-ip", "client-ip,,principal"})
    void refusesInvalidKeys(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KeySpec.parse(text));
        assertTrue(e.getMessage().contains("key"), e.getMessage());
    }

    @Test
    void refusesEmptyList() {
        assertThrows(IllegalArgumentException.class, () -> KeySpec.of(List.of()));
    }
}
