package dev.ratelimit.bootstrap;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.MalformedURLException;
import java.net.URL;
import java.security.CodeSource;
import java.security.ProtectionDomain;
import java.security.cert.Certificate;
import java.util.Collections;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Loads the agent's runtime from {@code inst/**.classdata} entries of the agent jar.
 *
 * <p>Those entries are not class files to any other loader, so the application cannot load the
 * runtime or the shaded libraries by accident. The parent is the platform loader: the runtime
 * sees the JDK and, through the bootstrap class path, the bridge, and never the application's
 * classes. When the jar is not on the bootstrap class path (the command line), the bridge
 * classes are read from the jar's top level instead.
 */
public final class RuntimeClassLoader extends ClassLoader {
    private static final String PREFIX = "inst/";
    private static final String SUFFIX = ".classdata";

    static {
        registerAsParallelCapable();
    }

    private final JarFile jar;
    private final String jarUrl;
    private final ProtectionDomain protectionDomain;

    private RuntimeClassLoader(JarFile jar, File file) throws MalformedURLException {
        super("rate-limit-agent", ClassLoader.getPlatformClassLoader());
        this.jar = jar;
        URL location = file.toURI().toURL();
        this.jarUrl = "jar:" + location + "!/";
        this.protectionDomain = new ProtectionDomain(new CodeSource(location, (Certificate[]) null), null, this, null);
    }

    /** A loader reading the runtime from the given agent jar. */
    public static ClassLoader open(JarFile jar, File file) throws MalformedURLException {
        return new RuntimeClassLoader(jar, file);
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
        String path = name.replace('.', '/');
        JarEntry entry = jar.getJarEntry(PREFIX + path + SUFFIX);
        if (entry == null) {
            entry = jar.getJarEntry(path + ".class");
        }
        if (entry == null) {
            throw new ClassNotFoundException(name);
        }
        byte[] bytes;
        try (InputStream in = jar.getInputStream(entry)) {
            // the size is in the jar's directory: read into an array of that size, not through
            // readAllBytes' 16 KB buffer and copy (the agent loads about a thousand classes)
            long size = entry.getSize();
            bytes = size >= 0 && size <= Integer.MAX_VALUE ? in.readNBytes((int) size) : in.readAllBytes();
        } catch (IOException e) {
            throw new ClassNotFoundException(name, e);
        }
        int dot = name.lastIndexOf('.');
        if (dot > 0) {
            String pkg = name.substring(0, dot);
            if (getDefinedPackage(pkg) == null) {
                try {
                    definePackage(pkg, null, null, null, null, null, null, null);
                } catch (IllegalArgumentException raced) {
                    // another thread defined it first
                }
            }
        }
        return defineClass(name, bytes, 0, bytes.length, protectionDomain);
    }

    @Override
    protected URL findResource(String name) {
        String entryName = name.endsWith(".class")
                ? PREFIX + name.substring(0, name.length() - ".class".length()) + SUFFIX
                : PREFIX + name;
        if (jar.getJarEntry(entryName) == null) {
            entryName = name;
            if (jar.getJarEntry(entryName) == null) {
                return null;
            }
        }
        try {
            return new URL(jarUrl + entryName);
        } catch (MalformedURLException e) {
            return null;
        }
    }

    @Override
    protected Enumeration<URL> findResources(String name) {
        URL url = findResource(name);
        return url == null ? Collections.emptyEnumeration() : Collections.enumeration(Collections.singletonList(url));
    }
}
