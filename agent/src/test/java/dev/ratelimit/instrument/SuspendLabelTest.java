package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.store.LimiterFactory;
import java.lang.ref.WeakReference;
import java.nio.file.Path;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.description.modifier.Visibility;
import net.bytebuddy.dynamic.loading.ClassLoadingStrategy;
import org.junit.jupiter.api.Test;

/**
 * A suspend function's continuation label is read through the continuation's own class: a field
 * a site kept kept a redeployed application's loader (the site outlives it), and read a class of
 * the same name from another loader as resuming, letting a new call through uncounted.
 */
class SuspendLabelTest {
    private static final String CONT = "app.Svc$send$1";
    private static final String DESC = "(Lkotlin/coroutines/Continuation;)Ljava/lang/Object;";

    private static RuleBook book() throws Exception {
        RuleSet set = ConfigLoader.parse("version: 1\nrules:\n  - name: send\n    match:\n      method: app.Svc#send\n"
                + "    limit: 100\n    window: 1h\n", "r.yaml", Path.of("."), name -> null);
        return new RuleBook(set, LimiterFactory.of(set.store()), null, () -> { });
    }

    /** A continuation class named CONT, with an int label, in a loader of its own. */
    private static Object continuation(int label) throws Exception {
        Class<?> type = new ByteBuddy().subclass(Object.class).name(CONT)
                .defineField("label", int.class, Visibility.PUBLIC)
                .make().load(null, ClassLoadingStrategy.Default.WRAPPER).getLoaded();
        Object cont = type.getConstructor().newInstance();
        type.getField("label").setInt(cont, label);
        return cont;
    }

    private static long allowed(MethodSites sites, int site) {
        return sites.rulesOf(site)[0].metrics().allowed();
    }

    /** A redeployed application's loader must not be kept by the agent once its site has been called. */
    @Test
    void aSuspendSiteDoesNotKeepItsLoader() throws Exception {
        MethodSites sites = new MethodSites(book());
        WeakReference<ClassLoader> deployment = deployCallAndUndeploy(sites);
        for (int i = 0; i < 50 && deployment.get() != null; i++) {
            System.gc();
            Thread.sleep(50);
        }
        assertNull(deployment.get(), "the application's loader is kept");
    }

    /** The same, a call whose last argument is no continuation. */
    @Test
    void aSiteWhoseLabelWasNeverReadDoesNotKeepItsLoaderEither() throws Exception {
        MethodSites sites = new MethodSites(book());
        WeakReference<ClassLoader> deployment = deployCallAndUndeploy(sites, false);
        for (int i = 0; i < 50 && deployment.get() != null; i++) {
            System.gc();
            Thread.sleep(50);
        }
        assertNull(deployment.get());
    }

    private static WeakReference<ClassLoader> deployCallAndUndeploy(MethodSites sites) throws Exception {
        return deployCallAndUndeploy(sites, true);
    }

    private static WeakReference<ClassLoader> deployCallAndUndeploy(MethodSites sites, boolean read) throws Exception {
        Object cont = continuation(0);
        if (!read) {
            ClassLoader app = cont.getClass().getClassLoader();
            int send = sites.register(app, "app.Svc", "send", DESC, "Svc", 1, true, false, null, CONT);
            sites.enter(send, new Object[] {new Object()});
            assertEquals(1, allowed(sites, send));
            return new WeakReference<>(app);
        }
        ClassLoader app = cont.getClass().getClassLoader();
        int send = sites.register(app, "app.Svc", "send", DESC, "Svc", 1, true, false, null, CONT);
        sites.enter(send, new Object[] {cont}); // a new call: counted, and the label's Field cached
        assertEquals(1, allowed(sites, send));
        return new WeakReference<>(app);
    }

    /**
     * A new call (label cleared) whose continuation is of the function's continuation class by
     * name but defined by another loader than the first one the site saw is counted: a field the
     * site kept from the first threw IllegalArgumentException on the second, read as resuming.
     */
    @Test
    void aNewCallWithAContinuationOfAnotherLoaderIsCounted() throws Exception {
        MethodSites sites = new MethodSites(book());
        Object first = continuation(0);
        Object other = continuation(0);
        int send = sites.register(first.getClass().getClassLoader(), "app.Svc", "send", DESC, "Svc", 1, true, false,
                null, CONT);
        sites.enter(send, new Object[] {first});
        sites.enter(send, new Object[] {other});
        assertEquals(2, allowed(sites, send));
    }
}
