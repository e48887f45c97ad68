package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.RateLimitBridge;
import java.lang.System.Logger.Level;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts classes instrumented and classes that failed to instrument; the first failure is logged
 * with its stack trace, later ones in one line each at debug level. A class that fails stays as
 * it was: not limited, never broken.
 */
final class TransformationErrors {
    private static final System.Logger LOG = System.getLogger("dev.ratelimit");

    private final AtomicLong transformed = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    /**
     * Whether a class that failed has been logged at error level: a flag of its own, not the
     * count of errors, which methods left out and unseen loaders add to (with the count, a class
     * failing after a method was left out was logged only at debug).
     */
    private final AtomicBoolean classFailureLogged = new AtomicBoolean();
    /** The methods (with the kind of error) {@link #countMethod} logged above debug, bounded. */
    private final Set<String> namedMethods = ConcurrentHashMap.newKeySet();
    /** Loader classes already named in a log line by {@link #bridgeUnseen}. */
    private final Set<String> unseenBy = ConcurrentHashMap.newKeySet();

    void transformed(String typeName) {
        transformed.incrementAndGet();
        LOG.log(Level.DEBUG, () -> "rate-limit-agent: instrumented " + typeName);
    }

    void failed(String typeName, Throwable error) {
        RateLimitBridge.transformationError();
        errors.incrementAndGet();
        if (classFailureLogged.compareAndSet(false, true)) {
            LOG.log(Level.ERROR, "rate-limit-agent: could not instrument " + typeName
                    + "; it runs without limits (further failures are logged at debug level)", error);
        } else {
            LOG.log(Level.DEBUG, () -> "rate-limit-agent: could not instrument " + typeName + ": " + error);
        }
    }

    /**
     * Counts a limited method left unwoven because the advice would take its code past the JVM's
     * limit, once its class has been woven without it, and says so at error level, naming it.
     * Counted each time its class is woven (a reload that retransforms the class counts it
     * again), named at error level once per method (up to 256 methods), later at debug.
     */
    void leftOut(String typeName, String method, String descriptor, int codeSize) {
        countMethod("left out", typeName + '#' + method + descriptor, Level.ERROR, "rate-limit-agent: could not limit "
                + typeName + "#" + method + descriptor + ": with the advice its code would be " + codeSize
                + " bytes, past the JVM's limit of 65535 for a method, so it runs without limits; the class's other"
                + " limited methods keep theirs");
    }

    /**
     * Counts a method's transformation error, and logs its line at {@code level} the first time
     * for this method and kind (up to 256 of them), later at debug.
     */
    private void countMethod(String kind, String method, Level level, String line) {
        RateLimitBridge.transformationError();
        errors.incrementAndGet();
        boolean first = namedMethods.size() < 256 && namedMethods.add(kind + ' ' + method);
        LOG.log(first ? level : Level.DEBUG, line);
    }

    /**
     * Counts a class left unwoven because its loader does not resolve the bridge to the boot class
     * path, and says so once per kind of loader, with what lets it through.
     */
    void bridgeUnseen(String typeName, ClassLoader loader) {
        RateLimitBridge.transformationError();
        errors.incrementAndGet();
        String kind = loader.getClass().getName();
        if (unseenBy.size() < 16 && unseenBy.add(kind)) {
            LOG.log(Level.ERROR, "rate-limit-agent: classes of the class loader " + kind
                    + " cannot see the package dev.ratelimit.bootstrap, which the agent puts on the boot class path,"
                    + " so they run without limits (first: " + typeName + "). Let the loader delegate the packages"
                    + " dev.ratelimit and dev.ratelimit.* to the boot class path: on WildFly or JBoss Modules,"
                    + " -Djboss.modules.system.pkgs=dev.ratelimit; on OSGi,"
                    + " -Dorg.osgi.framework.bootdelegation=dev.ratelimit,dev.ratelimit.*");
        } else {
            LOG.log(Level.DEBUG, () -> "rate-limit-agent: not instrumented, its class loader cannot see the bridge: " + typeName);
        }
    }

    /**
     * Counts a method annotated {@code RateLimited} whose annotation type its class's loader
     * serves no class file of, and names it at warning level (up to 256 methods, later at debug):
     * the annotation cannot be read, so the method runs without its limit (with those of the
     * file's rules that name it, if any).
     */
    void annotationUnreadable(String typeName, String method, String descriptor, String annotationType,
            boolean namedByRules) {
        countMethod("unreadable annotation", typeName + '#' + method + descriptor, Level.WARNING, "rate-limit-agent: "
                + typeName + "#" + method + descriptor + " is annotated " + annotationType
                + ", but its class loader serves no class file of that type (a loader that defines classes from"
                + " bytes), so the annotation cannot be read and its limit is not applied"
                + (namedByRules ? " (the rule file's rules that name the method are)"
                        : ": the method runs without limits; name it in the rule file")
                + ", or annotate it with dev.ratelimit.annotation.RateLimited");
    }

    /**
     * Names a constructor, abstract or native method annotated {@code RateLimited} at warning level
     * (up to 256 methods, later at debug): such a method is never limited. Not counted as an error:
     * nothing failed, and the class is woven as the rest of it needs.
     */
    void annotationIgnored(String typeName, String method, String descriptor, String annotationType, String what) {
        String named = typeName + '#' + method + descriptor;
        boolean first = namedMethods.size() < 256 && namedMethods.add("ignored " + named);
        LOG.log(first ? Level.WARNING : Level.DEBUG, () -> "rate-limit-agent: " + named + " is annotated "
                + annotationType + ", but it is " + what + ", which is never limited: "
                + (what.equals("a constructor") ? "annotate a method the constructor calls, or the factory that calls it"
                        : what.equals("an abstract method") ? "annotate the implementations, or name them in the rule file"
                        : "annotate the Java method that calls it"));
    }

    long transformed() {
        return transformed.get();
    }

    long errors() {
        return errors.get();
    }
}
