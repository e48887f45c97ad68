package dev.ratelimit.instrument;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Binds the instrumented method's return kind (a {@code RateLimitBridge.RETURNS_*} constant,
 * decided at transform time from the method's return type) into exit advice.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
@interface ReturnKind {
}
