package dev.ratelimit.config;

import java.util.regex.Pattern;

/**
 * A {@code CLASS#METHOD} pattern naming methods to limit, with binary class names
 * ({@code com.example.Outer$Inner#run}).
 *
 * <p>In the class part {@code *} matches within one name segment (never a {@code .}) and a
 * {@code **} segment matches any number of packages, none included: {@code **.ReportService}
 * matches {@code ReportService} and {@code com.acme.web.ReportService}. In the method part
 * {@code *} matches any characters. Both parts are compiled to regular expressions once, here.
 *
 * <p>{@link #matchesClass} is asked about every class the application loads, so it avoids the
 * regular expression where it can: a class part without wildcards is compared as a string, and
 * one with wildcards first has to start with the text before its first {@code *}.
 */
public final class MethodPattern {

    private final String text;
    private final Pattern classPattern;
    private final Pattern methodPattern;
    /** The class part when it has no wildcard, else null. */
    private final String literalClass;
    /** The class part's text before its first wildcard: every class it matches starts with it. */
    private final String classPrefix;

    private MethodPattern(String text, String classPart, Pattern classPattern, Pattern methodPattern) {
        this.text = text;
        this.classPattern = classPattern;
        this.methodPattern = methodPattern;
        int wildcard = classPart.indexOf('*');
        this.literalClass = wildcard < 0 ? classPart : null;
        this.classPrefix = wildcard < 0 ? classPart : classPart.substring(0, wildcard);
    }

    /**
     * Parses {@code CLASS#METHOD}.
     *
     * @throws IllegalArgumentException with a message for the user
     */
    public static MethodPattern parse(String text) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("empty method pattern; expected CLASS#METHOD, "
                    + "such as com.example.chat.MessageService#send");
        }
        int hash = text.indexOf('#');
        if (hash < 0 || hash != text.lastIndexOf('#')) {
            throw new IllegalArgumentException("invalid method pattern " + NodeReader.quoted(text)
                    + "; expected CLASS#METHOD with one '#', such as com.example.chat.MessageService#send");
        }
        String classPart = text.substring(0, hash);
        String methodPart = text.substring(hash + 1);
        if (methodPart.equals("<init>") || methodPart.equals("<clinit>")) {
            throw new IllegalArgumentException("invalid method pattern " + NodeReader.quoted(text)
                    + ": constructors and static initialisers cannot be limited; name a method instead");
        }
        return new MethodPattern(text, classPart, compileClass(text, classPart), compileMethod(text, methodPart));
    }

    private static Pattern compileClass(String text, String classPart) {
        if (classPart.isEmpty()) {
            throw invalid(text, "the class part before '#' is empty");
        }
        String[] segments = classPart.split("\\.", -1);
        boolean literal = false;
        StringBuilder regex = new StringBuilder();
        for (int i = 0; i < segments.length; i++) {
            String segment = segments[i];
            boolean last = i == segments.length - 1;
            if (segment.equals("**")) {
                // Zero or more whole packages; a trailing ** also takes the class name itself.
                regex.append(last ? "[^.]+(?:\\.[^.]+)*" : "(?:[^.]+\\.)*");
                continue;
            }
            if (segment.isEmpty()) {
                throw invalid(text, "the class name has an empty segment (two dots, or a dot at either end)");
            }
            if (segment.contains("**")) {
                throw invalid(text, "'**' must be a whole segment, as in **.Service or com.acme.**.Service");
            }
            for (int j = 0; j < segment.length(); j++) {
                char c = segment.charAt(j);
                if (c == '*') {
                    regex.append("[^.]*");
                } else if (Character.isJavaIdentifierPart(c) && !Character.isIdentifierIgnorable(c)) {
                    literal = true;
                    regex.append(Pattern.quote(String.valueOf(c)));
                } else {
                    throw invalid(text, "the class name contains '" + c + "', which cannot be part of a Java name");
                }
            }
            if (!last) {
                regex.append("\\.");
            }
        }
        if (!literal) {
            // A pattern of wildcards alone would instrument every class the JVM loads, the JDK's included.
            throw invalid(text, "the class part matches every class; name at least part of a class or package");
        }
        return Pattern.compile(regex.toString());
    }

    private static Pattern compileMethod(String text, String methodPart) {
        if (methodPart.isEmpty()) {
            throw invalid(text, "the method part after '#' is empty");
        }
        StringBuilder regex = new StringBuilder();
        for (int i = 0; i < methodPart.length(); i++) {
            char c = methodPart.charAt(i);
            if (c == '*') {
                regex.append(".*");
            } else if (Character.isJavaIdentifierPart(c) && !Character.isIdentifierIgnorable(c)) {
                regex.append(Pattern.quote(String.valueOf(c)));
            } else {
                throw invalid(text, "the method name contains '" + c + "', which cannot be part of a Java name");
            }
        }
        return Pattern.compile(regex.toString());
    }

    private static IllegalArgumentException invalid(String text, String reason) {
        return new IllegalArgumentException("invalid method pattern " + NodeReader.quoted(text) + ": " + reason);
    }

    /** True when the class part matches {@code binaryName} ({@code com.example.Outer$Inner}). */
    public boolean matchesClass(String binaryName) {
        if (literalClass != null) {
            return literalClass.equals(binaryName);
        }
        return binaryName.startsWith(classPrefix) && classPattern.matcher(binaryName).matches();
    }

    /**
     * When the class part reads like a canonical nested name ({@code com.acme.Outer.Inner}: a
     * segment that starts with a capital letter followed by another segment), what to write
     * instead ({@code com.acme.Outer$Inner}); else null. Such a pattern is valid (a package may
     * start with a capital), but it matches no class if {@code Outer} is a class: class names here
     * are binary names (the review of the thirty-eighth round).
     */
    public String nestedClassHint() {
        String classPart = text.substring(0, text.indexOf('#'));
        String[] segments = classPart.split("\\.", -1);
        for (int i = 0; i < segments.length - 1; i++) {
            if (!segments[i].isEmpty() && Character.isUpperCase(segments[i].charAt(0))) {
                String prefix = String.join(".", java.util.Arrays.copyOfRange(segments, 0, i + 1));
                String rest = String.join("$", java.util.Arrays.copyOfRange(segments, i + 1, segments.length));
                return "if " + prefix + " is a class, write its nested class as " + prefix + "$" + rest
                        + text.substring(text.indexOf('#'));
            }
        }
        return null;
    }

    /** True when the method part matches the method {@code name}. */
    public boolean matchesMethod(String name) {
        return methodPattern.matcher(name).matches();
    }

    @Override
    public boolean equals(Object other) {
        return this == other || (other instanceof MethodPattern && text.equals(((MethodPattern) other).text));
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** The pattern as written. */
    @Override
    public String toString() {
        return text;
    }
}
