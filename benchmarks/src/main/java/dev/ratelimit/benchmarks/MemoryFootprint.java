package dev.ratelimit.benchmarks;

import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.Outcome;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Path;

/**
 * Heap after GC with 1,000,000 distinct keys sent through one rule with {@code max-keys: 100000},
 * and bytes per tracked key (heap after GC with 100,000 keys present, less the heap before any key,
 * divided by 100,000). Keys are method arguments {@code "user-0000000"} to {@code "user-0999999"}
 * (12 characters, Latin-1: a 56-byte String with its array on a 64-bit JVM with compressed oops);
 * the String is part of what the store keeps, so it is counted in the bytes per key.
 *
 * <p>Run: {@code java -Xmx64m -cp target/benchmarks.jar dev.ratelimit.benchmarks.MemoryFootprint}.
 * Under {@code -Xmx64m} the run itself proves the 64 MB bound: it fails with OutOfMemoryError
 * otherwise.
 */
public final class MemoryFootprint {
    private static final long HUGE = 1_000_000_000_000_000_000L;

    private MemoryFootprint() {
    }

    public static void main(String[] args) throws Exception {
        int total = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int maxKeys = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        RuleSet rules = ConfigLoader.parse("version: 1\n"
                + "store:\n"
                + "  type: local\n"
                + "  max-keys: " + maxKeys + "\n"
                + "rules:\n"
                + "  - name: per-user\n"
                + "    key: arg0\n"
                + "    limit: " + HUGE + "\n"
                + "    window: 1h\n", "bench.yaml", Path.of("."), name -> null);
        ActiveRule rule = new ActiveRule(rules.rule("per-user").orElseThrow(), rules.store().maxKeys());
        // warm the code paths on keys that are then gone with their rule
        ActiveRule warm = new ActiveRule(rules.rule("per-user").orElseThrow(), rules.store().maxKeys());
        for (int i = 0; i < 1000; i++) {
            warm.decide(new Object[] {key(i)}, null);
        }
        warm = null;

        System.out.println("JVM: " + System.getProperty("java.vm.name") + " " + Runtime.version()
                + ", max heap " + mb(Runtime.getRuntime().maxMemory()) + ", GC "
                + ManagementFactory.getGarbageCollectorMXBeans().get(0).getName());
        long before = heapAfterGc();
        System.out.printf("heap after GC, rule loaded, no key:        %8.1f MB%n", before / 1048576.0);
        for (int i = 0; i < maxKeys; i++) {
            decide(rule, i);
        }
        long withMax = heapAfterGc();
        long perKey = (withMax - before) / maxKeys;
        System.out.printf("heap after GC, %,9d keys tracked:        %8.1f MB  (tracked %,d)%n",
                maxKeys, withMax / 1048576.0, rule.trackedKeys());
        System.out.printf("bytes per tracked key:                     %8d B%n", perKey);
        long peak = withMax;
        for (int i = maxKeys; i < total; i++) {
            decide(rule, i);
            if ((i + 1) % 100_000 == 0) {
                long heap = heapAfterGc();
                peak = Math.max(peak, heap);
                System.out.printf("heap after GC, %,9d distinct keys sent:  %8.1f MB  (tracked %,d)%n",
                        i + 1, heap / 1048576.0, rule.trackedKeys());
            }
        }
        long end = heapAfterGc();
        System.out.printf("RESULT keys=%d maxKeys=%d heapAfterGcMB=%.1f peakHeapAfterGcMB=%.1f bytesPerKey=%d tracked=%d%n",
                total, maxKeys, end / 1048576.0, peak / 1048576.0, perKey, rule.trackedKeys());
        if (rule.metrics().allowed() != total) {
            throw new IllegalStateException("expected " + total + " allowed calls, got " + rule.metrics().allowed());
        }
        // a one-fixed-window rule's Allowed is summed over its tracked keys' counters on each read
        long[] reads = new long[21];
        for (int i = 0; i < reads.length; i++) {
            long start = System.nanoTime();
            if (rule.metrics().allowed() != total) {
                throw new IllegalStateException("Allowed changed");
            }
            reads[i] = System.nanoTime() - start;
        }
        java.util.Arrays.sort(reads);
        System.out.printf("one read of Allowed, %,d keys tracked:      %8.2f ms (median of %d)%n",
                rule.trackedKeys(), reads[reads.length / 2] / 1e6, reads.length);
    }

    private static void decide(ActiveRule rule, int i) {
        if (!Outcome.isAllowed(rule.decide(new Object[] {key(i)}, null))) {
            throw new IllegalStateException("rejected");
        }
    }

    private static String key(int i) {
        return String.format("user-%07d", i);
    }

    private static long heapAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static String mb(long bytes) {
        return bytes / 1048576 + " MB";
    }
}
