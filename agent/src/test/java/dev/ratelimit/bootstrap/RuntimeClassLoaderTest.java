package dev.ratelimit.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.implementation.FixedValue;
import net.bytebuddy.matcher.ElementMatchers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runtime's loader reads {@code inst/**.classdata} entries of a real jar, compressed or stored. */
class RuntimeClassLoaderTest {
    @TempDir
    Path dir;

    /** A class {@code name} whose {@code call()} returns {@code value}, padded past one 16 KB read buffer when {@code large}. */
    private static byte[] classFile(String name, String value, boolean large) {
        DynamicType.Builder<Object> builder = new ByteBuddy().subclass(Object.class).implement(Callable.class).name(name)
                .method(ElementMatchers.named("call")).intercept(FixedValue.value(value));
        if (large) {
            // a constant string as long as a class file allows (65,535 bytes): the entry is larger than any one read
            builder = builder.defineField("PADDING", String.class, Modifier.PUBLIC | Modifier.STATIC | Modifier.FINAL)
                    .value("x".repeat(60_000));
        }
        return builder.make().getBytes();
    }

    private File jar(boolean stored, String[] names, byte[][] files) throws Exception {
        File jar = dir.resolve(stored ? "stored.jar" : "deflated.jar").toFile();
        try (ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(jar.toPath()))) {
            for (int i = 0; i < names.length; i++) {
                ZipEntry entry = new ZipEntry("inst/" + names[i].replace('.', '/') + ".classdata");
                if (stored) {
                    entry.setMethod(ZipEntry.STORED);
                    entry.setSize(files[i].length);
                    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
                    crc.update(files[i]);
                    entry.setCrc(crc.getValue());
                }
                out.putNextEntry(entry);
                out.write(files[i]);
                out.closeEntry();
            }
        }
        return jar;
    }

    @Test
    void classesOfCompressedAndStoredEntriesLoadWhole() throws Exception {
        String[] names = {"dev.example.runtime.Small", "dev.example.runtime.Large"};
        byte[][] files = {classFile(names[0], "small", false), classFile(names[1], "large", true)};
        assertTrue(files[1].length > 60_000, "the large class file spans several reads");
        for (boolean stored : new boolean[] {false, true}) {
            File file = jar(stored, names, files);
            try (JarFile jarFile = new JarFile(file, false)) {
                ClassLoader loader = RuntimeClassLoader.open(jarFile, file);
                for (int i = 0; i < names.length; i++) {
                    Class<?> type = loader.loadClass(names[i]);
                    assertSame(loader, type.getClassLoader());
                    assertEquals(i == 0 ? "small" : "large",
                            ((Callable<?>) type.getDeclaredConstructor().newInstance()).call(), names[i]);
                    try (var in = loader.getResourceAsStream(names[i].replace('.', '/') + ".class")) {
                        assertArrayEquals(files[i], in.readAllBytes(), "the class file as a resource");
                    }
                }
                assertThrows(ClassNotFoundException.class, () -> loader.loadClass("dev.example.runtime.Missing"));
            }
        }
    }
}
