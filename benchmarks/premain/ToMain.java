/** Prints the wall clock, in milliseconds, as its main method begins; premain-ab.sh reads it. */
public final class ToMain {
    private ToMain() {
    }

    public static void main(String[] args) {
        long now = System.currentTimeMillis();
        System.out.println("to-main " + now);
    }
}
