package dev.ratelimit;

/** Lower-case hexadecimal text of bytes (the JDK's {@code HexFormat} is Java 17; the agent runs on 11). */
public final class Hex {
    private Hex() {
    }

    /** Two lower-case hex digits per byte, most significant first. */
    public static String of(byte[] bytes) {
        char[] out = new char[bytes.length * 2];
        for (int i = 0; i < bytes.length; i++) {
            out[2 * i] = Character.forDigit((bytes[i] >> 4) & 0xf, 16);
            out[2 * i + 1] = Character.forDigit(bytes[i] & 0xf, 16);
        }
        return new String(out);
    }
}
