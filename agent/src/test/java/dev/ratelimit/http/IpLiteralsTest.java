package dev.ratelimit.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.net.InetAddress;
import java.util.HexFormat;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class IpLiteralsTest {

    @ParameterizedTest
    @CsvSource({
            "0.0.0.0, 0.0.0.0",
            "192.0.2.1, 192.0.2.1",
            "255.255.255.255, 255.255.255.255",
            "10.0.0.10, 10.0.0.10",
            "::1, ::1",
            "2001:DB8::1, 2001:db8::1",
            "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
            "2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
            "1:2:3:4:5:6:7:8, 1:2:3:4:5:6:7:8",
            "1:0:3:4:5:6:7:8, 1:0:3:4:5:6:7:8",
            "::, ::",
            "::1.2.3.4, ::102:304",
            "::ffff:1.2.3.4, 1.2.3.4",
            "[::1], ::1",
            "fe80::1%eth0, fe80::1",
            "[fe80::1%en0.5], fe80::1"})
    void literalsParseAndFormatCanonically(String literal, String canonical) {
        assertEquals(canonical, IpLiterals.format(IpLiterals.parse(literal, false)));
    }

    @ParameterizedTest
    @CsvSource({
            "192.0.2.1:8080, 192.0.2.1",
            "192.0.2.1:0, 192.0.2.1",
            "192.0.2.1:65535, 192.0.2.1",
            "192.0.2.1:_obf, 192.0.2.1",
            "[2001:db8::1]:4711, 2001:db8::1",
            "[2001:db8::1]:_a.b-c, 2001:db8::1"})
    void portsAreStrippedWhenAllowed(String literal, String canonical) {
        assertEquals(canonical, IpLiterals.format(IpLiterals.parse(literal, true)));
        assertNull(IpLiterals.parse(literal, false));
    }

    @ParameterizedTest
    @ValueSource(strings = {"192.0.2.1:65536", "192.0.2.1:123456", "192.0.2.1:", "192.0.2.1:8o", "192.0.2.1:_",
            "192.0.2.1:_a b", "[2001:db8::1]4711", "[2001:db8::1]:", "2001:db8::1:4711:1:1:1:1:1",
            "[2001:db8::1]:80:80"})
    void badPortsAreRejected(String literal) {
        assertNull(IpLiterals.parse(literal, true));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "01.2.3.4", "1.2.3.04", "00.1.1.1",
            "1..2.3", ".1.2.3", "1.2.3.", "1.2.3.-4", "+1.2.3.4", "0x1.2.3.4", "1.2.3.4 ", " 1.2.3.4", "1e2.1.1.1",
            "4294967295", "localhost", "example.com", "unknown", "_hidden", "[1.2.3.4]", "[]", "[::1", "::1]",
            "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::1", ":", "g::1", ".::1", "fe80::1%", "fe80::1%a%b", "fe80::1%a/b",
            "::ffff:1.2.3.256", "::ffff:1.2.3", "::ffff:01.2.3.4", "::ffff:1.2.3.04", "1.2.3.4::1", "\u0661.2.3.4", "1.2.3.4\n", "::1\u0000"})
    void nonLiteralsAreRejected(String text) {
        assertNull(IpLiterals.parse(text, true));
    }

    @ParameterizedTest
    @ValueSource(strings = {"::1", "2001:db8::8:800:200c:417a", "::ffff:0:0", "1::", "ff02::1:ff00:0", "64:ff9b::1"})
    void ipv6ParsingAgreesWithTheJdk(String literal) throws Exception {
        byte[] jdk = InetAddress.getByName(literal).getAddress();
        assertArrayEquals(jdk, IpLiterals.parse(literal, false));
    }

    @ParameterizedTest
    @CsvSource({
            "00000000000000000000000000000000, ::",
            "00000000000000000000000000000001, ::1",
            "20010db8000000000001000000000001, 2001:db8::1:0:0:1",
            "20010db8000000010000000000000000, 2001:db8:0:1::",
            "00010000000100000001000000010000, 1:0:1:0:1:0:1:0",
            "fe800000000000000000000000000000, fe80::"})
    void ipv6IsFormattedPerRfc5952(String hex, String text) {
        assertEquals(text, IpLiterals.format(HexFormat.of().parseHex(hex)));
    }
}
