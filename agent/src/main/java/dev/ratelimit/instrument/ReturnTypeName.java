package dev.ratelimit.instrument;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Binds the instrumented method's erased return type's binary name ({@code Class.getName}'s
 * form, {@code [Ljava.lang.String;}) into exit advice, as a string constant: for the default
 * value of an array. Bound by a mapping of our own rather than {@code @Advice.Origin("#r")}, whose
 * pattern pulled Byte Buddy's constant machinery (and a dynamic proxy) into every start-up.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
@interface ReturnTypeName {
}
