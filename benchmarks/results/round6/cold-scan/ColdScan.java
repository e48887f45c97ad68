import java.io.*;
import java.util.*;
import java.util.jar.*;
import java.util.zip.*;
import java.lang.reflect.*;

public class ColdScan {
    public static void main(String[] args) throws Exception {
        // args: appJar mode(old|new) classesJarDir
        List<byte[]> files = new ArrayList<>();
        try (JarFile boot = new JarFile(args[0])) {
            for (JarEntry e : Collections.list(boot.entries())) {
                if (e.getName().startsWith("BOOT-INF/lib/") && e.getName().endsWith(".jar")) {
                    try (JarInputStream in = new JarInputStream(boot.getInputStream(e))) {
                        JarEntry inner;
                        while ((inner = in.getNextJarEntry()) != null) {
                            if (inner.getName().endsWith(".class") && !inner.getName().contains("module-info")) files.add(in.readAllBytes());
                        }
                    }
                }
            }
        }
        Collections.shuffle(files, new Random(42));
        int n = Integer.parseInt(args[2]);
        files = files.subList(0, Math.min(n, files.size()));
        Class<?> c = Class.forName("dev.ratelimit.instrument.ClassPrefilter");
        Method scan = c.getDeclaredMethod("scan", byte[].class);
        scan.setAccessible(true);
        long t0 = System.nanoTime();
        int found = 0;
        for (byte[] f : files) found += (Integer) scan.invoke(null, f);
        long t1 = System.nanoTime();
        System.out.println(args[1] + " classes=" + files.size() + " found=" + found + " ms=" + (t1 - t0) / 1e6);
    }
}
