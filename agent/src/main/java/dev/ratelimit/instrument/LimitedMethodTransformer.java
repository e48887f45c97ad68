package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.RateLimitBridge;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.annotation.AnnotationDescription;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.RecordComponentDescription;
import net.bytebuddy.description.type.TypeDefinition;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.implementation.bytecode.assign.Assigner;
import net.bytebuddy.implementation.bytecode.constant.IntegerConstant;
import net.bytebuddy.implementation.bytecode.constant.TextConstant;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.Handle;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.pool.TypePool;
import net.bytebuddy.utility.OpenedClassReader;

/**
 * Inlines the limit check into methods named by a rule's {@code match: method} pattern and into
 * methods annotated with any annotation whose simple name is {@code RateLimited}.
 *
 * <p>Each such method becomes a {@link MethodSite}; its id and return kind are bound into the
 * advice as constants, so the advice reads nothing reflectively at run time.
 *
 * <p>The four advices (with or without the arguments, for a method with or without a value) are
 * built once: building one reads its class files and resolves its parameters, about a millisecond
 * a time, which per limited method made a class of a hundred of them take a quarter of a second
 * to load. The constants are resolved as each method is woven: the site id from what
 * {@link #transform} recorded for the class on this thread, the return kind from the method.
 */
final class LimitedMethodTransformer {
    private static final String ANNOTATION_SIMPLE_NAME = "RateLimited";
    /** Bits of an advice kind (the index into {@link #advice}). */
    private static final int PASSES_ARGUMENTS = 1;
    private static final int RETURNS_VOID = 2;

    private final MethodSites sites;
    private final RuleBookSource rules;
    /** The advices, by {@link #kind}. */
    private final Advice[] advice = new Advice[4];
    /**
     * The class being woven on this thread: the site id and advice kind of each method to limit, by
     * name and descriptor. Set by {@link #transform}, read while the class is made, cleared by
     * {@link #endWeave}.
     */
    private final ThreadLocal<Map<String, int[]>> weaving = new ThreadLocal<>();

    /** Where the transformer reads the current rules; they change on reload. */
    interface RuleBookSource {
        RuleBook current();
    }

    LimitedMethodTransformer(MethodSites sites, RuleBookSource rules, Advice.ExceptionHandler exceptionHandler) {
        this.sites = sites;
        this.rules = rules;
        ClassLoader ours = LimitedMethodTransformer.class.getClassLoader();
        ClassFileLocator adviceLocator = ClassFileLocator.ForClassLoader.of(ours);
        TypePool pool = TypePool.Default.of(adviceLocator);
        TypeDescription methodEnter = pool.describe(MethodEnterAdvice.class.getName()).resolve();
        TypeDescription argumentsEnter = pool.describe(ArgumentsEnterAdvice.class.getName()).resolve();
        TypeDescription valueExit = pool.describe(ValueExitAdvice.class.getName()).resolve();
        TypeDescription voidExit = pool.describe(VoidExitAdvice.class.getName()).resolve();
        for (int kind = 0; kind < advice.length; kind++) {
            advice[kind] = Advice.withCustomMapping()
                    .bind(SiteId.class, new SiteOfMethod())
                    .bind(ReturnKind.class, new ReturnKindOfMethod())
                    .bind(ReturnTypeName.class, new ReturnTypeNameOfMethod())
                    .to((kind & PASSES_ARGUMENTS) != 0 ? argumentsEnter : methodEnter,
                            (kind & RETURNS_VOID) != 0 ? voidExit : valueExit, adviceLocator)
                    .withExceptionHandler(exceptionHandler);
        }
    }

    /**
     * The class's simple name for its methods' default rule names; for an anonymous class, which
     * has none, its binary name after the package ({@code Main$1}), so that its inline rule has a
     * valid name (it once had {@code #get}, refused, and the method was not limited).
     */
    static String simpleName(TypeDescription type) {
        String simple = type.getSimpleName();
        if (!simple.isEmpty()) {
            return simple;
        }
        String name = type.getName();
        return name.substring(name.lastIndexOf('.') + 1);
    }

    /** Which of the four advices a method gets. */
    private static int kind(boolean passesArguments, MethodDescription method) {
        return (passesArguments ? PASSES_ARGUMENTS : 0) | (method.getReturnType().represents(void.class) ? RETURNS_VOID : 0);
    }

    /** How a Kotlin {@code suspend} function's descriptor ends: it takes a continuation, and returns its value or a marker. */
    static final String SUSPEND_TAIL = "Lkotlin/coroutines/Continuation;)Ljava/lang/Object;";

    private static String key(MethodDescription method) {
        return method.getInternalName() + method.getDescriptor();
    }

    /** Types worth transforming: named by a method rule, or declaring an annotated method. */
    ElementMatcher<TypeDescription> typeMatcher() {
        return new ElementMatcher<TypeDescription>() {
            @Override
            public boolean matches(TypeDescription type) {
                // interfaces are looked at too: their default and static methods have bodies
                if (type.isAnnotation()) {
                    return false;
                }
                if (rules.current().namesClass(type.getName())) {
                    return true;
                }
                for (MethodDescription.InDefinedShape method : type.getDeclaredMethods()) {
                    if (rateLimited(method) != null) {
                        return true;
                    }
                }
                return false;
            }
        };
    }

    /**
     * Adds the advice to {@code builder} for {@code type}, defined by {@code loader}. The builder
     * must be made on this thread, and {@link #endWeave} called after.
     */
    DynamicType.Builder<?> transform(DynamicType.Builder<?> builder, TypeDescription type, ClassLoader loader,
            byte[] classFile) {
        RuleBook book = rules.current();
        Map<String, int[]> limited = new HashMap<>();
        Set<String> callingThemselves = null;
        Map<String, String> continuations = null;
        for (MethodDescription.InDefinedShape method : type.getDeclaredMethods()) {
            AnnotationDescription annotation = rateLimited(method);
            if (annotation == null && !book.namesMethod(type.getName(), method.getName())) {
                continue;
            }
            if (!limitable(method) || generatedForEnum(type, method)
                    || (annotation == null && recordMember(type, method))) {
                continue;
            }
            MethodSite.AnnotationValues values = annotation == null ? null : values(annotation);
            String resumedBy = null;
            if (method.getDescriptor().endsWith(SUSPEND_TAIL)) {
                if (continuations == null) {
                    continuations = continuationClasses(classFile);
                }
                resumedBy = continuations.get(key(method));
            }
            // a suspend function's advice needs its last argument, to tell a resumption
            boolean passesArguments = resumedBy != null
                    || (!method.getParameters().isEmpty() && usesArguments(book, type, method, values));
            if (callingThemselves == null) {
                callingThemselves = callingThemselves(classFile);
            }
            // an annotated record member: limited by its annotation, never by a pattern
            boolean patternsApply = annotation == null || !recordMember(type, method);
            int site = sites.register(loader, type.getName(), method.getName(), method.getDescriptor(),
                    simpleName(type), method.getParameters().size(), passesArguments,
                    callingThemselves.contains(key(method)), values, resumedBy, patternsApply);
            limited.put(key(method), new int[] {site, kind(passesArguments, method)});
        }
        return weave(builder, limited);
    }

    /**
     * The methods of a class file ({@code name + descriptor}) whose code calls a method of the same
     * name and descriptor, on any owner: a method that may call itself, directly or through an
     * override. A rule bound to one only of those still nests (see {@link MethodSites}).
     *
     * <p>The code of a method includes its own lambdas and method references, as written: javac
     * compiles {@code kids.forEach(k -> walk(k))} to a synthetic {@code lambda$walk$0} of the
     * class, and {@code kids.forEach(this::walk)} to an {@code invokedynamic} naming {@code walk};
     * neither is a call instruction in {@code walk}, so a tree walk through either once counted
     * each node as a call of its own. A method handle of the class's own that the method's
     * {@code invokedynamic} names is followed into that method when it is synthetic (a lambda's
     * body, itself perhaps holding a lambda), and is a call to the method when it names it; a
     * handle naming its name and descriptor on another owner ({@code next::visit}, a delegate's)
     * is a call too, as {@code k -> next.visit(k)} is. A call of a synthetic method of the class's
     * own name and descriptor, on any owner, is followed into it too: a bridge. A composite's
     * {@code handle(Req)} calling {@code child.handle(r)} on a {@code Handler<Req>} calls
     * {@code Handler.handle(Object)}, the class's bridge, which calls {@code handle(Req)}; each
     * level of such a tree was counted (the review of the method path, thirty-sixth round).
     */
    static Set<String> callingThemselves(byte[] classFile) {
        Map<String, Set<String>> calls = new HashMap<>();
        Map<String, Set<String>> handles = new HashMap<>();
        Set<String> synthetic = new HashSet<>();
        String[] owner = new String[1];
        OpenedClassReader.of(classFile).accept(new ClassVisitor(OpenedClassReader.ASM_API) {
            @Override
            public void visit(int version, int access, String name, String signature, String superName,
                    String[] interfaces) {
                owner[0] = name;
            }

            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                    String[] exceptions) {
                if (name.startsWith("<")) {
                    return null; // constructors and initialisers are never limited
                }
                String self = name + descriptor;
                if ((access & Opcodes.ACC_SYNTHETIC) != 0) {
                    synthetic.add(self);
                }
                Set<String> called = calls.computeIfAbsent(self, any -> new HashSet<>());
                Set<String> referenced = handles.computeIfAbsent(self, any -> new HashSet<>());
                return new MethodVisitor(OpenedClassReader.ASM_API) {
                    @Override
                    public void visitMethodInsn(int opcode, String calledOwner, String calledName,
                            String calledDescriptor, boolean isInterface) {
                        called.add(calledName + calledDescriptor);
                    }

                    @Override
                    public void visitInvokeDynamicInsn(String indyName, String indyDescriptor,
                            Handle bootstrap, Object... arguments) {
                        for (Object argument : arguments) {
                            if (argument instanceof Handle) {
                                Handle handle = (Handle) argument;
                                String named = handle.getName() + handle.getDesc();
                                if (handle.getOwner().equals(owner[0])) {
                                    referenced.add(named); // perhaps a lambda of its own, to follow
                                } else {
                                    // a reference to another owner's method (next::visit) is a
                                    // call as much as next.visit(k) is: any owner, as for calls
                                    called.add(named);
                                }
                            }
                        }
                    }
                };
            }
        }, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
        Set<String> found = new HashSet<>();
        for (String self : calls.keySet()) {
            if (synthetic.contains(self)) {
                continue; // never limited
            }
            // the method, then the lambdas of its own it names, and theirs
            ArrayDeque<String> code = new ArrayDeque<>();
            Set<String> seen = new HashSet<>();
            code.add(self);
            while (!code.isEmpty() && !found.contains(self)) {
                String method = code.poll();
                if (!seen.add(method)) {
                    continue;
                }
                for (String named : calls.getOrDefault(method, Set.of())) {
                    if (named.equals(self)) {
                        found.add(self);
                    } else if (synthetic.contains(named)) {
                        // a bridge of the class's own, which a call through the generic type
                        // lands in (h.handle(r) on a Handler<Req>: handle(Object), which calls
                        // handle(Req)); any owner, as for calls
                        code.add(named);
                    }
                }
                for (String named : handles.getOrDefault(method, Set.of())) {
                    if (named.equals(self)) {
                        found.add(self);
                    } else if (synthetic.contains(named)) {
                        code.add(named);
                    }
                }
            }
        }
        return found;
    }

    /**
     * The annotations named {@code RateLimited} (in any package) on the methods of a class file,
     * as the class file has them: {@code {method name, descriptor, annotation's binary name, why
     * it is never limited or null}}. What Byte Buddy describes lacks an annotation whose type it
     * cannot read, so this is how a method annotated with a type its loader serves no class file
     * of is found (see {@link AdviceTransformer}); and a constructor, an abstract or a native
     * method, which an application's own annotation may allow, is never limited, which its
     * warning says (they were passed over without a word: the review of the thirty-eighth round).
     * Bridges and other synthetic methods are left out: javac copies a method's annotations to
     * its bridges.
     */
    static java.util.List<String[]> rateLimitedAnnotations(byte[] classFile) {
        java.util.List<String[]> found = new java.util.ArrayList<>(1);
        OpenedClassReader.of(classFile).accept(new ClassVisitor(OpenedClassReader.ASM_API) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                    String[] exceptions) {
                if (name.equals("<clinit>") || (access & (Opcodes.ACC_BRIDGE | Opcodes.ACC_SYNTHETIC)) != 0) {
                    return null;
                }
                // never limited, annotation or not (see limitable)
                String never = name.equals("<init>") ? "a constructor"
                        : (access & Opcodes.ACC_ABSTRACT) != 0 ? "an abstract method"
                        : (access & Opcodes.ACC_NATIVE) != 0 ? "a native method" : null;
                return new MethodVisitor(OpenedClassReader.ASM_API) {
                    @Override
                    public net.bytebuddy.jar.asm.AnnotationVisitor visitAnnotation(String annotation, boolean visible) {
                        if (annotation.startsWith("L") && annotation.endsWith(";")) {
                            String type = annotation.substring(1, annotation.length() - 1);
                            int cut = Math.max(type.lastIndexOf('/'), type.lastIndexOf('$'));
                            if (type.substring(cut + 1).equals(ANNOTATION_SIMPLE_NAME)) {
                                found.add(new String[] {name, descriptor, type.replace('/', '.'), never});
                            }
                        }
                        return null;
                    }
                };
            }
        }, ClassReader.SKIP_CODE | ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
        return found;
    }

    /** Whether a method rule of the file names this method (its annotation aside). */
    boolean namedByRules(String className, String methodName) {
        return rules.current().namesMethod(className, methodName);
    }

    /**
     * The continuation class of each Kotlin {@code suspend} function of a class file ({@code name
     * + descriptor} to binary name) whose code tests, as the Kotlin compiler's state machine does
     * first of all, its last argument, the caller's continuation, with {@code instanceof} against a
     * class of the same top-level class's nest ({@code Shop$visit$1}; an interface's body in
     * {@code Greeter$DefaultImpls} names {@code Greeter$greet$1}). That class is the function's
     * own continuation, which passes itself when it resumes the function after a suspension. The
     * test need not be the first instruction: an agent woven before this one (a coverage agent)
     * puts its own code first. A suspend function without the test (one that never suspends, or
     * only in a tail call) is entered once per call, and is not listed.
     */
    static Map<String, String> continuationClasses(byte[] classFile) {
        Map<String, String> found = new HashMap<>();
        String[] owner = new String[1];
        OpenedClassReader.of(classFile).accept(new ClassVisitor(OpenedClassReader.ASM_API) {
            @Override
            public void visit(int version, int access, String name, String signature, String superName,
                    String[] interfaces) {
                owner[0] = name;
            }

            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                    String[] exceptions) {
                if (!descriptor.endsWith(SUSPEND_TAIL)) {
                    return null;
                }
                Type[] parameters = Type.getArgumentTypes(descriptor);
                int slot = (access & Opcodes.ACC_STATIC) != 0 ? 0 : 1;
                for (int i = 0; i < parameters.length - 1; i++) {
                    slot += parameters[i].getSize();
                }
                int nest = owner[0].indexOf('$');
                String topLevel = nest < 0 ? owner[0] : owner[0].substring(0, nest);
                return new PrologueVisitor(slot, topLevel + '$', type -> found.put(name + descriptor, type));
            }
        }, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
        return found;
    }

    /** Finds a method's first {@code ALOAD continuation; INSTANCEOF TopLevel$...}. */
    private static final class PrologueVisitor extends MethodVisitor {
        private final int continuation;
        private final String nestedPrefix;
        private final Consumer<String> found;
        /** 0: looking; 1: the continuation was loaded by the last instruction; 2: done. */
        private int step;

        PrologueVisitor(int continuation, String nestedPrefix, Consumer<String> found) {
            super(OpenedClassReader.ASM_API);
            this.continuation = continuation;
            this.nestedPrefix = nestedPrefix;
            this.found = found;
        }

        @Override
        public void visitVarInsn(int opcode, int var) {
            if (step != 2) {
                step = opcode == Opcodes.ALOAD && var == continuation ? 1 : 0;
            }
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
            if (step == 1 && opcode == Opcodes.INSTANCEOF && type.startsWith(nestedPrefix)) {
                found.accept(type.replace('/', '.'));
                step = 2;
            } else {
                other();
            }
        }

        /** Any other instruction: the continuation, if just loaded, was not tested. */
        private void other() {
            if (step != 2) {
                step = 0;
            }
        }

        @Override
        public void visitInsn(int opcode) {
            other();
        }

        @Override
        public void visitIntInsn(int opcode, int operand) {
            other();
        }

        @Override
        public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
            other();
        }

        @Override
        public void visitMethodInsn(int opcode, String owner, String name, String descriptor, boolean isInterface) {
            other();
        }

        @Override
        public void visitInvokeDynamicInsn(String name, String descriptor, Handle bootstrap, Object... arguments) {
            other();
        }

        @Override
        public void visitJumpInsn(int opcode, Label label) {
            other();
        }

        @Override
        public void visitLdcInsn(Object value) {
            other();
        }

        @Override
        public void visitIincInsn(int var, int increment) {
            other();
        }

        @Override
        public void visitTableSwitchInsn(int min, int max, Label fallback, Label... labels) {
            other();
        }

        @Override
        public void visitLookupSwitchInsn(Label fallback, int[] keys, Label[] labels) {
            other();
        }

        @Override
        public void visitMultiANewArrayInsn(String descriptor, int dimensions) {
            other();
        }
    }

    /** Visits each method of {@code limited} with its advice, and records them for the make. */
    private DynamicType.Builder<?> weave(DynamicType.Builder<?> builder, Map<String, int[]> limited) {
        if (limited.isEmpty()) {
            return builder;
        }
        weaving.set(limited);
        boolean[] used = new boolean[advice.length];
        for (int[] method : limited.values()) {
            used[method[1]] = true;
        }
        for (int kind = 0; kind < advice.length; kind++) {
            if (used[kind]) {
                builder = builder.visit(advice[kind].on(new OfKind(kind)));
            }
        }
        return builder;
    }

    /**
     * Takes a method ({@code name + descriptor}) out of the class being woven on this thread, so
     * that the next make leaves it as it is: its advice made it too large for the JVM. Returns
     * whether it was one of the class's limited methods.
     */
    boolean leaveOut(String method) {
        Map<String, int[]> limited = weaving.get();
        return limited != null && limited.remove(method) != null;
    }

    /** The class {@link #transform} recorded on this thread has been made (or failed): forget it. */
    void endWeave() {
        weaving.remove();
    }

    /** The methods of the class being woven on this thread that get the advice of one kind. */
    private final class OfKind implements ElementMatcher<MethodDescription> {
        private final int kind;

        OfKind(int kind) {
            this.kind = kind;
        }

        @Override
        public boolean matches(MethodDescription method) {
            Map<String, int[]> limited = weaving.get();
            int[] found = limited == null ? null : limited.get(key(method));
            return found != null && found[1] == kind;
        }
    }

    /** {@code @SiteId}: the site {@link #transform} registered for the method being woven. */
    private final class SiteOfMethod implements Advice.OffsetMapping {
        @Override
        public Target resolve(TypeDescription instrumentedType, MethodDescription instrumentedMethod, Assigner assigner,
                Advice.ArgumentHandler argumentHandler, Sort sort) {
            Map<String, int[]> limited = weaving.get();
            int[] found = limited == null ? null : limited.get(key(instrumentedMethod));
            if (found == null) {
                // a method matched without a site: fail the weave (the class stays as it was) rather than guess
                throw new IllegalStateException("no rate limit site recorded for " + instrumentedType.getName() + "."
                        + instrumentedMethod.getName());
            }
            return new Target.ForStackManipulation(IntegerConstant.forValue(found[0]));
        }
    }

    /** {@code @ReturnTypeName}: the erased return type's binary name, a string constant. */
    private static final class ReturnTypeNameOfMethod implements Advice.OffsetMapping {
        @Override
        public Target resolve(TypeDescription instrumentedType, MethodDescription instrumentedMethod, Assigner assigner,
                Advice.ArgumentHandler argumentHandler, Sort sort) {
            return new Target.ForStackManipulation(
                    new TextConstant(instrumentedMethod.getReturnType().asErasure().getName()));
        }
    }

    /** {@code @ReturnKind}: how the bridge should answer a rejection for the method being woven. */
    private static final class ReturnKindOfMethod implements Advice.OffsetMapping {
        @Override
        public Target resolve(TypeDescription instrumentedType, MethodDescription instrumentedMethod, Assigner assigner,
                Advice.ArgumentHandler argumentHandler, Sort sort) {
            TypeDescription.Generic returned = instrumentedMethod.getReturnType();
            // a type variable (<T extends List<String>> T pick()) is whatever the caller's type
            // argument says, which an empty List.of() may not be: the caller's cast would fail
            // in the application's code. Its default is null, and so is an array of one (T[],
            // T[][]): an empty array of the erasure (Object[], CharSequence[]) failed the
            // caller's cast to String[] (the review of the thirty-seventh round's commits)
            TypeDescription.Generic element = returned;
            while (element.getSort() == TypeDefinition.Sort.GENERIC_ARRAY) {
                element = element.getComponentType();
            }
            int kind = element.getSort() == TypeDefinition.Sort.VARIABLE
                    ? RateLimitBridge.RETURNS_NULL : returnKind(returned.asErasure());
            return new Target.ForStackManipulation(IntegerConstant.forValue(kind));
        }
    }

    /**
     * Weaves the advice into every method {@code type} declares, alternating the two enter
     * advices, with a site that is never registered: the bytes are thrown away. For
     * {@link AdviceTransformer#warmUp()} only.
     */
    DynamicType.Builder<?> warmUp(DynamicType.Builder<?> builder, TypeDescription type) {
        // transform names each site after its class's simple name. For a top-level class that
        // reads TypeDescription.UNDEFINED (no enclosing type), and the first read initializes the
        // interface's constants, dynamic proxies: 9 ms on a cold JVM. The warm-up class is nested.
        TypeDescription initialized = TypeDescription.UNDEFINED;
        boolean passesArguments = false;
        Map<String, int[]> limited = new HashMap<>();
        for (MethodDescription.InDefinedShape method : type.getDeclaredMethods()) {
            if (limitable(method)) {
                limited.put(key(method), new int[] {-1, kind(passesArguments, method)});
                passesArguments = !passesArguments;
            }
        }
        return weave(builder, limited);
    }

    private static boolean limitable(MethodDescription method) {
        return !method.isConstructor() && !method.isTypeInitializer() && !method.isAbstract() && !method.isNative()
                && !method.isBridge() && !method.isSynthetic();
    }

    /**
     * An enum's {@code values()} and {@code valueOf(String)}, which javac writes and marks neither
     * synthetic nor bridge, and Kotlin's {@code getEntries()}. The JDK calls {@code values()} itself
     * ({@code Enum.valueOf}, {@code EnumSet}, {@code EnumMap}, a {@code switch} on the enum in another
     * class), and caches what it returns: a wildcard pattern over a package limited them, and a
     * rejection broke the enum for the JVM's life (the review of the thirty-eighth round).
     */
    static boolean generatedForEnum(TypeDescription type, MethodDescription method) {
        if (!type.isEnum() || !method.isStatic()) {
            return false;
        }
        String name = method.getName();
        int parameters = method.getParameters().size();
        TypeDescription returned = method.getReturnType().asErasure();
        if (parameters == 0 && name.equals("values")) {
            return returned.isArray() && returned.getComponentType().equals(type);
        }
        if (parameters == 1 && name.equals("valueOf")) {
            return returned.equals(type)
                    && method.getParameters().get(0).getType().asErasure().represents(String.class);
        }
        return parameters == 0 && name.equals("getEntries") && returned.getName().equals("kotlin.enums.EnumEntries");
    }

    /**
     * A record's {@code equals(Object)}, {@code hashCode()}, {@code toString()} and component
     * accessors, which javac writes unless the record declares them: a pattern over a package
     * limited them, and a {@code HashMap} of records or a record pattern ({@code o instanceof
     * Point(int x, int y)}) then threw the rejection (the review of the thirty-ninth round). Left
     * alone by patterns, whoever wrote them; an annotation on one still limits it.
     */
    static boolean recordMember(TypeDescription type, MethodDescription method) {
        if (!type.isRecord() || method.isStatic()) {
            return false;
        }
        String name = method.getName();
        int parameters = method.getParameters().size();
        if (parameters == 1) {
            return name.equals("equals") && method.getParameters().get(0).getType().asErasure().represents(Object.class);
        }
        if (parameters != 0) {
            return false;
        }
        if (name.equals("hashCode") || name.equals("toString")) {
            return true;
        }
        for (RecordComponentDescription.InDefinedShape component : type.getRecordComponents()) {
            if (component.getActualName().equals(name)) {
                return true;
            }
        }
        return false;
    }

    private static boolean usesArguments(RuleBook book, TypeDescription type, MethodDescription method,
            MethodSite.AnnotationValues values) {
        MethodSite probe = new MethodSite(-1, type.getName(), method.getName(), simpleName(type),
                method.getParameters().size(), false, false, values);
        return book.needsArguments(probe);
    }


    /** Any annotation whose simple name is RateLimited: ours, or the application's own. */
    static AnnotationDescription rateLimited(MethodDescription method) {
        for (AnnotationDescription annotation : method.getDeclaredAnnotations()) {
            String name = annotation.getAnnotationType().getName();
            int cut = Math.max(name.lastIndexOf('.'), name.lastIndexOf('$'));
            if (name.regionMatches(cut + 1, ANNOTATION_SIMPLE_NAME, 0, ANNOTATION_SIMPLE_NAME.length())
                    && name.length() - cut - 1 == ANNOTATION_SIMPLE_NAME.length()) {
                return annotation;
            }
        }
        return null;
    }

    /** The annotation's attributes; those an application's own annotation lacks take our defaults. */
    private static MethodSite.AnnotationValues values(AnnotationDescription annotation) {
        return new MethodSite.AnnotationValues(
                attribute(annotation, "value", String.class, ""),
                attribute(annotation, "limit", Number.class, 10L).longValue(),
                attribute(annotation, "window", String.class, "1s"),
                attribute(annotation, "key", String.class, "global"));
    }

    private static <T> T attribute(AnnotationDescription annotation, String name, Class<T> type, T fallback) {
        for (MethodDescription.InDefinedShape property : annotation.getAnnotationType().getDeclaredMethods()) {
            if (property.getName().equals(name)) {
                Object value = annotation.getValue(property).resolve();
                return type.isInstance(value) ? type.cast(value) : fallback;
            }
        }
        return fallback;
    }

    private static int returnKind(TypeDescription type) {
        if (type.isArray()) {
            return RateLimitBridge.RETURNS_ARRAY;
        }
        if (type.isPrimitive()) {
            switch (type.getName()) {
                case "boolean": return RateLimitBridge.RETURNS_BOOLEAN;
                case "byte": return RateLimitBridge.RETURNS_BYTE;
                case "short": return RateLimitBridge.RETURNS_SHORT;
                case "char": return RateLimitBridge.RETURNS_CHAR;
                case "int": return RateLimitBridge.RETURNS_INT;
                case "long": return RateLimitBridge.RETURNS_LONG;
                case "float": return RateLimitBridge.RETURNS_FLOAT;
                case "double": return RateLimitBridge.RETURNS_DOUBLE;
                default: return RateLimitBridge.RETURNS_NULL;
            }
        }
        return returnKind(type.getName());
    }

    /** The kind of a class or interface's default, by binary name ({@link RateLimitBridge#defaultValue}). */
    static int returnKind(String name) {
        switch (name) {
            case "java.util.Optional": return RateLimitBridge.RETURNS_OPTIONAL;
            case "java.util.OptionalInt": return RateLimitBridge.RETURNS_OPTIONAL_INT;
            case "java.util.OptionalLong": return RateLimitBridge.RETURNS_OPTIONAL_LONG;
            case "java.util.OptionalDouble": return RateLimitBridge.RETURNS_OPTIONAL_DOUBLE;
            case "java.util.List":
            case "java.util.Collection":
            case "java.lang.Iterable":
                return RateLimitBridge.RETURNS_LIST;
            case "java.util.Set": return RateLimitBridge.RETURNS_SET;
            case "java.util.Map": return RateLimitBridge.RETURNS_MAP;
            // a new one the caller may add to (RateLimitBridge.emptyOf)
            case "java.util.ArrayList":
            case "java.util.LinkedList":
            case "java.util.HashSet":
            case "java.util.LinkedHashSet":
            case "java.util.TreeSet":
            case "java.util.HashMap":
            case "java.util.LinkedHashMap":
            case "java.util.TreeMap":
            case "java.util.ArrayDeque":
            case "java.util.Queue":
            case "java.util.Deque":
            case "java.util.SortedSet":
            case "java.util.NavigableSet":
            case "java.util.SortedMap":
            case "java.util.NavigableMap":
            case "java.util.concurrent.ConcurrentMap":
            case "java.util.concurrent.ConcurrentHashMap":
            case "java.util.concurrent.CopyOnWriteArrayList":
            case "java.util.Iterator":
            case "java.util.stream.Stream":
            case "java.util.PriorityQueue":
            case "java.util.Vector":
            case "java.util.Stack":
            case "java.util.Hashtable":
            case "java.util.Properties":
            case "java.util.IdentityHashMap":
            case "java.util.WeakHashMap":
            case "java.util.concurrent.BlockingQueue":
            case "java.util.concurrent.BlockingDeque":
            case "java.util.concurrent.TransferQueue":
            case "java.util.concurrent.LinkedBlockingQueue":
            case "java.util.concurrent.LinkedBlockingDeque":
            case "java.util.concurrent.LinkedTransferQueue":
            case "java.util.concurrent.PriorityBlockingQueue":
            case "java.util.concurrent.ConcurrentLinkedQueue":
            case "java.util.concurrent.ConcurrentLinkedDeque":
            case "java.util.concurrent.CopyOnWriteArraySet":
            case "java.util.concurrent.ConcurrentNavigableMap":
            case "java.util.concurrent.ConcurrentSkipListMap":
            case "java.util.concurrent.ConcurrentSkipListSet":
            case "java.util.SequencedCollection":
            case "java.util.SequencedSet":
            case "java.util.SequencedMap":
            case "java.util.ListIterator":
            case "java.util.Enumeration":
            case "java.util.Spliterator":
            case "java.util.stream.IntStream":
            case "java.util.stream.LongStream":
            case "java.util.stream.DoubleStream":
                return RateLimitBridge.RETURNS_EMPTY_OF_TYPE;
            default: return RateLimitBridge.RETURNS_NULL;
        }
    }
}
