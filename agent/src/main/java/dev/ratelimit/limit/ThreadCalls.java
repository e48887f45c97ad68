package dev.ratelimit.limit;

/**
 * The limited calls one thread is inside, as much as the end of a request needs of them: how
 * many, and cutting back to a depth. A request that ends has no limited call of its own still in
 * progress, so whatever it left above the depth it began at comes from an exit advice that did
 * not run, and would otherwise make every later call on the thread look nested (not counted).
 */
public interface ThreadCalls {
    int depth();

    void truncate(int depth);
}
