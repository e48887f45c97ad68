package dev.ratelimit.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits how often the annotated method may be called, when the application runs under
 * {@code -javaagent:rate-limit-agent.jar}. Without the agent the annotation does nothing.
 *
 * <p>The agent reads the annotation from the class file without loading it, and accepts any
 * annotation whose simple name is {@code RateLimited}: an application may declare its own copy
 * (with the same attribute names) and depend on nothing of ours.
 *
 * <ul>
 *   <li>{@code @RateLimited("report-export")} takes the rule named {@code report-export} from the
 *       rule file.</li>
 *   <li>{@code @RateLimited(limit = 5, window = "1s", key = "arg0")} declares the limit inline.
 *       A rule in the rule file named like the method's default rule name
 *       ({@code SimpleClassName#method}) overrides the inline values.</li>
 *   <li>{@code @RateLimited} alone uses the rule of the default name, or the inline defaults
 *       below (10 calls a second, one counter for every caller).</li>
 * </ul>
 *
 * <p>A rejected call throws {@link dev.ratelimit.RateLimitExceededException} unless the rule
 * says {@code on-reject: return-default}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface RateLimited {

    /** The name of a rule in the rule file; empty for the method's default name. */
    String value() default "";

    /** Calls allowed per window when no rule in the rule file applies; must be positive. */
    long limit() default 10;

    /** The window, as in the rule file: {@code 500ms}, {@code 1s}, {@code 1m}, {@code 1h}, {@code 1d}. */
    String window() default "1s";

    /**
     * What to count by: {@code global}, {@code argN}, {@code argN.prop}, {@code client-ip},
     * {@code principal}, {@code header:NAME}; several keys separated by commas.
     */
    String key() default "global";
}
