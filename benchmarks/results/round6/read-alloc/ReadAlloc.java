import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.util.Collections;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/** Bytes allocated reading every inst/**.classdata entry of the agent jar, as RuntimeClassLoader reads them. */
public class ReadAlloc {
    public static void main(String[] args) throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (JarFile jar = new JarFile(args[0], false)) {
            for (int round = 0; round < 3; round++) {
                for (String mode : new String[] {"readAllBytes", "readNBytes(size)"}) {
                    long before = threads.getCurrentThreadAllocatedBytes();
                    long classes = 0, bytes = 0;
                    for (JarEntry entry : Collections.list(jar.entries())) {
                        if (!entry.getName().startsWith("inst/") || !entry.getName().endsWith(".classdata")) continue;
                        try (InputStream in = jar.getInputStream(entry)) {
                            byte[] b = mode.equals("readAllBytes") ? in.readAllBytes() : in.readNBytes((int) entry.getSize());
                            bytes += b.length;
                        }
                        classes++;
                    }
                    long allocated = threads.getCurrentThreadAllocatedBytes() - before;
                    System.out.printf("%s: %d classes, %.1f MB of class files, %.1f MB allocated (%.1f KB a class)%n",
                            mode, classes, bytes / 1e6, allocated / 1e6, allocated / 1024.0 / classes);
                }
            }
        }
    }
}
