#!/usr/bin/env bash
# Builds reference agents for the start-up comparison (benchmarks/README.md, "Fourth round",
# "Fifth round" and "Sixth round"):
#   benchmarks/target/floor-agents/empty.jar         a premain that does nothing
#   benchmarks/target/floor-agents/noop-transformer.jar  a premain that registers a retransform-capable
#                                                     transformer that changes nothing
#   benchmarks/target/floor-agents/minimal-bb.jar    AgentBuilder + one advice on HttpServlet.service
#   benchmarks/target/floor-agents/advice-floor.jar  one advice on HttpServlet.service built and woven the
#                                                     way this agent does it (Advice built off main, decorate)
#   benchmarks/target/floor-agents/yaml-floor.jar    the advice floor, after composing the rule file (config=PATH)
#                                                     with SnakeYAML Engine in premain, as this agent does
#   benchmarks/target/floor-agents/burn-floor.jar    the advice floor plus a thread that burns burn=MILLIS of CPU
#                                                     (agent options) as premain returns
#   benchmarks/target/floor-agents/yaml-parse-floor.jar  the YAML floor with Engine's event parser, no nodes
#   benchmarks/target/floor-agents/yaml-json-floor.jar   the YAML floor with Engine's default (JSON) schema
#   benchmarks/target/floor-agents/snakeyaml-floor.jar   the YAML floor with SnakeYAML (YAML 1.1) instead of
#                                                     SnakeYAML Engine (the SnakeYAML that test-app.jar bundles)
#   benchmarks/target/floor-agents/http-floor.jar    the advice floor whose advice does the least per request that
#                                                     the HTTP benchmark's rule asks (sixteenth round; with
#                                                     http-floor-boot.jar beside it): for http-wrk.sh
# All but the first two use the Byte Buddy jar of the build (from the local Maven repository; run
# mvn -B -DskipTests install first), beside it as byte-buddy.jar.
# Then, e.g.: benchmarks/startup-ab.sh 24 empty=benchmarks/target/floor-agents/empty.jar \
#   minimal-bb=benchmarks/target/floor-agents/minimal-bb.jar ours=agent/target/rate-limit-agent.jar
set -euo pipefail
cd "$(dirname "$0")"
version=$(sed -n 's:.*<byte-buddy.version>\(.*\)</byte-buddy.version>.*:\1:p' ../pom.xml)
bb="$HOME/.m2/repository/net/bytebuddy/byte-buddy/$version/byte-buddy-$version.jar"
[[ -f $bb ]] || { echo "missing $bb: run mvn -B -DskipTests install first" >&2; exit 1; }
yaml_version=$(sed -n 's:.*<snakeyaml-engine.version>\(.*\)</snakeyaml-engine.version>.*:\1:p' ../pom.xml)
yaml="$HOME/.m2/repository/org/snakeyaml/snakeyaml-engine/$yaml_version/snakeyaml-engine-$yaml_version.jar"
[[ -f $yaml ]] || { echo "missing $yaml: run mvn -B -DskipTests install first" >&2; exit 1; }
snakeyaml_version=$(unzip -l ../test-app/target/test-app.jar | sed -n 's:.*BOOT-INF/lib/snakeyaml-\([0-9.]*\)\.jar$:\1:p')
snakeyaml="$HOME/.m2/repository/org/yaml/snakeyaml/$snakeyaml_version/snakeyaml-$snakeyaml_version.jar"
[[ -n $snakeyaml_version && -f $snakeyaml ]] || { echo "missing SnakeYAML (test-app's): run mvn -B -DskipTests install first" >&2; exit 1; }
# the HTTP floor's advice is compiled against the servlet API of the container it is measured in
tomcat_version=$(unzip -l ../test-app/target/test-app.jar | sed -n 's:.*BOOT-INF/lib/tomcat-embed-core-\([0-9.]*\)\.jar$:\1:p')
servlet_api="$HOME/.m2/repository/org/apache/tomcat/embed/tomcat-embed-core/$tomcat_version/tomcat-embed-core-$tomcat_version.jar"
[[ -n $tomcat_version && -f $servlet_api ]] || { echo "missing Tomcat (test-app's): run mvn -B -DskipTests install first" >&2; exit 1; }
out=target/floor-agents
rm -rf "$out"
mkdir -p "$out/classes"
cp "$bb" "$out/byte-buddy.jar"
cp "$yaml" "$out/snakeyaml-engine.jar"
cp "$snakeyaml" "$out/snakeyaml.jar"
javac --release 11 -d "$out/classes" -cp "$out/byte-buddy.jar:$out/snakeyaml-engine.jar:$out/snakeyaml.jar:$servlet_api" \
  floor-agents/src/floor/*.java
printf 'Premain-Class: floor.EmptyAgent\n' >"$out/empty.mf"
printf 'Premain-Class: floor.NoopTransformerAgent\nCan-Retransform-Classes: true\n' >"$out/noop-transformer.mf"
printf 'Premain-Class: floor.MinimalByteBuddyAgent\nClass-Path: byte-buddy.jar\nCan-Retransform-Classes: true\n' >"$out/minimal-bb.mf"
printf 'Premain-Class: floor.AdviceFloorAgent\nClass-Path: byte-buddy.jar\nCan-Retransform-Classes: true\n' >"$out/advice-floor.mf"
printf 'Premain-Class: floor.YamlFloorAgent\nClass-Path: byte-buddy.jar snakeyaml-engine.jar\nCan-Retransform-Classes: true\n' >"$out/yaml-floor.mf"
printf 'Premain-Class: floor.YamlParseFloorAgent\nClass-Path: byte-buddy.jar snakeyaml-engine.jar\nCan-Retransform-Classes: true\n' >"$out/yaml-parse-floor.mf"
printf 'Premain-Class: floor.YamlJsonFloorAgent\nClass-Path: byte-buddy.jar snakeyaml-engine.jar\nCan-Retransform-Classes: true\n' >"$out/yaml-json-floor.mf"
printf 'Premain-Class: floor.SnakeYamlFloorAgent\nClass-Path: byte-buddy.jar snakeyaml.jar\nCan-Retransform-Classes: true\n' >"$out/snakeyaml-floor.mf"
printf 'Premain-Class: floor.BurnFloorAgent\nClass-Path: byte-buddy.jar\nCan-Retransform-Classes: true\n' >"$out/burn-floor.mf"
jar cfm "$out/empty.jar" "$out/empty.mf" -C "$out/classes" floor/EmptyAgent.class
jar cfm "$out/noop-transformer.jar" "$out/noop-transformer.mf" -C "$out/classes" 'floor/NoopTransformerAgent.class' -C "$out/classes" 'floor/NoopTransformerAgent$1.class'
jar cfm "$out/minimal-bb.jar" "$out/minimal-bb.mf" -C "$out/classes" 'floor/MinimalByteBuddyAgent.class' \
  -C "$out/classes" 'floor/MinimalByteBuddyAgent$ServiceAdvice.class'
jar cfm "$out/advice-floor.jar" "$out/advice-floor.mf" -C "$out/classes" 'floor/AdviceFloorAgent.class' \
  -C "$out/classes" 'floor/AdviceFloorAgent$Weaver.class' -C "$out/classes" 'floor/AdviceFloorAgent$ServiceAdvice.class'
jar cfm "$out/yaml-floor.jar" "$out/yaml-floor.mf" -C "$out/classes" floor/YamlFloorAgent.class \
  -C "$out/classes" floor/RuleFile.class \
  -C "$out/classes" 'floor/AdviceFloorAgent.class' -C "$out/classes" 'floor/AdviceFloorAgent$Weaver.class' \
  -C "$out/classes" 'floor/AdviceFloorAgent$ServiceAdvice.class'
jar cfm "$out/burn-floor.jar" "$out/burn-floor.mf" -C "$out/classes" floor/BurnFloorAgent.class \
  -C "$out/classes" 'floor/AdviceFloorAgent.class' -C "$out/classes" 'floor/AdviceFloorAgent$Weaver.class' \
  -C "$out/classes" 'floor/AdviceFloorAgent$ServiceAdvice.class'
for variant in YamlParseFloorAgent:yaml-parse-floor YamlJsonFloorAgent:yaml-json-floor SnakeYamlFloorAgent:snakeyaml-floor; do
  jar cfm "$out/${variant#*:}.jar" "$out/${variant#*:}.mf" -C "$out/classes" "floor/${variant%%:*}.class" \
    -C "$out/classes" floor/RuleFile.class \
    -C "$out/classes" 'floor/AdviceFloorAgent.class' -C "$out/classes" 'floor/AdviceFloorAgent$Weaver.class' \
    -C "$out/classes" 'floor/AdviceFloorAgent$ServiceAdvice.class'
done
printf 'Premain-Class: floor.HttpFloorAgent\nClass-Path: byte-buddy.jar\nCan-Retransform-Classes: true\n' >"$out/http-floor.mf"
jar cfm "$out/http-floor.jar" "$out/http-floor.mf" -C "$out/classes" floor/HttpFloorAgent.class \
  -C "$out/classes" 'floor/HttpFloorAgent$RequestAdvice.class' \
  -C "$out/classes" 'floor/AdviceFloorAgent.class' -C "$out/classes" 'floor/AdviceFloorAgent$Weaver.class' \
  -C "$out/classes" 'floor/AdviceFloorAgent$ServiceAdvice.class'
jar cf "$out/http-floor-boot.jar" -C "$out/classes" floor/HttpFloorCounters.class
echo "built $out/http-floor.jar (and http-floor-boot.jar)"
echo "built the three YAML variants, $out/burn-floor.jar, $out/yaml-floor.jar, $out/empty.jar, $out/noop-transformer.jar, $out/minimal-bb.jar and $out/advice-floor.jar (Byte Buddy $version)"
