package dev.ratelimit.limit;

import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads {@code prop.prop} from an argument: each step is a getter ({@code getProp()} or
 * {@code isProp()}), an accessor of that name (records: {@code prop()}), or a field, looked up
 * once per class and cached in a {@link ClassValue}. A {@code null} along the way reads as
 * {@code null}. A class without the property is cached too: each call then fails at once (the
 * agent lets it through and counts it), without a reflective search of the class per call; so is
 * a class whose methods cannot be listed (one names a type its class loader cannot find).
 */
final class PropertyPath {
    private static final PropertyPath EMPTY = new PropertyPath(new Step[0]);

    private final Step[] steps;

    private PropertyPath(Step[] steps) {
        this.steps = steps;
    }

    static PropertyPath of(List<String> names) {
        if (names.isEmpty()) {
            return EMPTY;
        }
        Step[] steps = new Step[names.size()];
        for (int i = 0; i < steps.length; i++) {
            steps[i] = new Step(names.get(i));
        }
        return new PropertyPath(steps);
    }

    Object read(Object root) {
        Object value = root;
        for (Step step : steps) {
            if (value == null) {
                return null;
            }
            value = step.read(value);
        }
        return value;
    }

    /** Whether the path reads nothing: the argument itself is the value. */
    boolean isEmpty() {
        return steps.length == 0;
    }

    /** Steps, for tests: how many classes each has been looked up in. */
    Step step(int index) {
        return steps[index];
    }

    static final class Step extends ClassValue<Object> {
        private final String name;
        /** How many classes this step has been looked up in (a plain count, for tests). */
        int lookups;

        Step(String name) {
            this.name = name;
        }

        Object read(Object target) {
            Object accessor = get(target.getClass());
            if (accessor instanceof String) {
                throw new KeyUnreadableException("property '" + name + "'", (String) accessor);
            }
            try {
                if (accessor instanceof Method) {
                    return ((Method) accessor).invoke(target);
                }
                return ((Field) accessor).get(target);
            } catch (InvocationTargetException e) {
                throw ThrownByApplication.report("reading property '" + name + "' of " + target.getClass().getName(),
                        e.getCause());
            } catch (IllegalAccessException e) {
                throw new KeyUnreadableException("property '" + name + "'", "property '" + name + "' of "
                        + target.getClass().getName() + " is not accessible", e);
            }
        }

        /** The accessor of the property on {@code type}, or the message saying why there is none. */
        @Override
        protected Object computeValue(Class<?> type) {
            lookups++;
            try {
                return accessor(type);
            } catch (IllegalStateException missing) {
                return missing.getMessage();
            } catch (LinkageError unresolvable) {
                // a method of the class names a type its loader cannot find: the search fails the
                // same way every time, so it is cached like a missing property, not run per call
                return "property '" + name + "' of " + type.getName() + " cannot be looked up: " + unresolvable;
            }
        }

        private AccessibleObject accessor(Class<?> type) {
            String capitalized = Character.toUpperCase(name.charAt(0)) + name.substring(1);
            for (String candidate : new String[] {"get" + capitalized, "is" + capitalized, name}) {
                Method method = findMethod(type, candidate);
                if (method != null) {
                    return callable(type, method);
                }
            }
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                for (Field field : c.getDeclaredFields()) {
                    if (field.getName().equals(name) && !Modifier.isStatic(field.getModifiers())) {
                        return accessible(field);
                    }
                }
            }
            throw new IllegalStateException("no property '" + name + "' (getter, accessor or field) on "
                    + type.getName());
        }

        private static Method findMethod(Class<?> type, String name) {
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                for (Method method : c.getDeclaredMethods()) {
                    if (method.getName().equals(name) && method.getParameterCount() == 0
                            && !Modifier.isStatic(method.getModifiers()) && method.getReturnType() != void.class) {
                        return method;
                    }
                }
            }
            try {
                return type.getMethod(name);
            } catch (NoSuchMethodException e) {
                return null;
            }
        }

        /**
         * The method, or when it cannot be called from here (a public method of a class that
         * is not public, or of a package its module does not export, such as the entries of
         * {@code Map.of}), the same method as a public, exported supertype declares it.
         */
        private static AccessibleObject callable(Class<?> type, Method method) {
            if (method.trySetAccessible() || (publicMember(method) && exported(method.getDeclaringClass()))) {
                return method;
            }
            Method counterpart = publicCounterpart(type, method.getName());
            return counterpart != null ? counterpart : accessible(method);
        }

        private static Method publicCounterpart(Class<?> type, String name) {
            Deque<Class<?>> supertypes = new ArrayDeque<>();
            supertypes.add(type);
            Set<Class<?>> seen = new HashSet<>();
            while (!supertypes.isEmpty()) {
                Class<?> c = supertypes.poll();
                if (!seen.add(c)) {
                    continue;
                }
                if (exported(c)) {
                    try {
                        Method method = c.getMethod(name);
                        if (!Modifier.isStatic(method.getModifiers()) && method.getReturnType() != void.class
                                && exported(method.getDeclaringClass())) {
                            return method;
                        }
                    } catch (NoSuchMethodException e) {
                        // not on this one
                    }
                }
                if (c.getSuperclass() != null) {
                    supertypes.add(c.getSuperclass());
                }
                supertypes.addAll(Arrays.asList(c.getInterfaces()));
            }
            return null;
        }

        /** A public class of a package its module exports to everyone: its public methods can be called. */
        private static boolean exported(Class<?> c) {
            return c != null && Modifier.isPublic(c.getModifiers()) && c.getModule().isExported(c.getPackageName());
        }

        private static AccessibleObject accessible(AccessibleObject accessor) {
            if (!accessor.trySetAccessible() && !publicMember(accessor)) {
                throw new IllegalStateException(accessor + " cannot be read: its module does not open it");
            }
            return accessor;
        }

        private static boolean publicMember(AccessibleObject accessor) {
            int modifiers = accessor instanceof Method ? ((Method) accessor).getModifiers() : ((Field) accessor).getModifiers();
            return Modifier.isPublic(modifiers);
        }
    }
}
