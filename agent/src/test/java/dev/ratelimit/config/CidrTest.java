package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet6Address;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CidrTest {

    static InetAddress ip(String literal) throws Exception {
        return InetAddress.getByName(literal);
    }

    @Test
    void ipv4Blocks() throws Exception {
        Cidr net = Cidr.parse("10.0.0.0/8");
        assertEquals("10.0.0.0/8", net.toString());
        assertTrue(net.contains(ip("10.255.1.2")));
        assertFalse(net.contains(ip("11.0.0.0")));
        Cidr host = Cidr.parse("127.0.0.1");
        assertEquals("127.0.0.1/32", host.toString());
        assertTrue(host.contains(ip("127.0.0.1")));
        assertFalse(host.contains(ip("127.0.0.2")));
        assertTrue(Cidr.parse("0.0.0.0/0").contains(ip("203.0.113.9")));
        assertTrue(Cidr.parse("192.168.1.128/25").contains(ip("192.168.1.200")));
        assertFalse(Cidr.parse("192.168.1.128/25").contains(ip("192.168.1.100")));
        assertEquals(Cidr.parse("127.0.0.1"), Cidr.parse("127.0.0.1/32"));
    }

    @Test
    void ipv6Blocks() throws Exception {
        Cidr net = Cidr.parse("fd00::/8");
        assertEquals("fd00::/8", net.toString());
        assertTrue(net.contains(ip("fd12:3456::1")));
        assertFalse(net.contains(ip("fe80::1")));
        assertEquals("::1/128", Cidr.parse("::1").toString());
        assertEquals("2001:db8::/32", Cidr.parse("2001:DB8:0:0::/32").toString());
        assertEquals("2001:db8:0:1::/64", Cidr.parse("2001:db8:0:1::/64").toString());
        assertEquals("::/0", Cidr.parse("::/0").toString());
        assertTrue(Cidr.parse("::1").contains(ip("::1")));
        // an IPv4 address in the last 32 bits, written without leading zeros, is taken
        assertEquals("64:ff9b::a00:1/128", Cidr.parse("64:ff9b::10.0.0.1").toString());
        assertEquals("64:ff9b::/96", Cidr.parse("64:ff9b::0.0.0.0/96").toString());
    }

    @Test
    void familiesNeverMix() throws Exception {
        assertFalse(Cidr.parse("0.0.0.0/0").contains(ip("::1")));
        assertFalse(Cidr.parse("::/0").contains(ip("127.0.0.1")));
    }

    @Test
    void ipv4MappedAddressIsLookedUpAsIpv4() throws Exception {
        byte[] mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xFF, (byte) 0xFF, 10, 1, 2, 3};
        InetAddress address = Inet6Address.getByAddress(null, mapped, -1);
        assertTrue(Cidr.parse("10.0.0.0/8").contains(address));
        assertFalse(Cidr.parse("::/0").contains(InetAddress.getByName("10.1.2.3")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Cidr.parse("::ffff:10.0.0.1"));
        assertTrue(e.getMessage().contains("plain IPv4"), e.getMessage());
    }

    @Test
    void hostBitsAreRefusedWithASuggestion() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Cidr.parse("10.0.0.1/8"));
        assertTrue(e.getMessage().contains("did you mean 10.0.0.0/8?"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Cidr.parse("fd00::1/8"));
        assertTrue(e.getMessage().contains("did you mean fd00::/8?"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "localhost", "example.com", "10.0.0", "10.0.0.0.0", "256.0.0.1", "010.0.0.1",
        "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/08", "1.2.3.4/8x", "::1/129", "fe80::1%eth0",
        "gggg::1", "1:2:3:4:5:6:7:8:9", "10.0.0.0/8/8", " 10.0.0.1", "0x7f.0.0.1",
        // an IPv4 address inside IPv6 is written as a plain one must be (the schema review)
        "::01.2.3.4", "::1.2.3.04", "64:ff9b::010.0.0.1", "::1.2.3", "::1.2.3.4.5"})
    void refusesInvalidBlocks(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Cidr.parse(text));
        assertTrue(e.getMessage().startsWith("invalid address block") || e.getMessage().startsWith("empty"),
                e.getMessage());
    }

    @Test
    void neverResolvesHostNames() {
        // A name made only of hex digits and dots would be a DNS lookup if handed to InetAddress.
        assertThrows(IllegalArgumentException.class, () -> Cidr.parse("cafe.face"));
        assertThrows(IllegalArgumentException.class, () -> Cidr.parse("deadbeef"));
    }
}
