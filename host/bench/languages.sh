#!/usr/bin/env bash
# What a plugin costs in each language, side by side in one run: its size, its cold compile
# (a run with an empty compile cache), a warm whole-process `mesh-adopt run mesh-vault`
# (median wall time and peak resident memory of RUNS runs), and then the first run of a second
# plugin of the language, `postgres`, with the cache the first left (its compile reusing the
# functions the two share), for the shipped Rust plugins and the JavaScript and Python ports
# in plugins/js and plugins/python.
#
# Run by `just bench-langs` (after `just setup-langs`), with a release build of the host.
set -euo pipefail
cd "$(dirname "$0")/../.."

runs=${RUNS:-15}
host=$PWD/target/release/mesh-adopt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-10s %12s %14s %14s %14s %16s\n' language "size (bytes)" "cold compile" "warm run" "warm peak RSS" "second plugin"
for language in rust js python; do
    catalogue=$work/$language
    cp -r catalogue "$catalogue"
    if [ "$language" != rust ]; then
        # The module's source is the port; `build` places its plugin as it would in any catalogue.
        for module in mesh-vault postgres; do
            python3 - "$catalogue/modules/$module/manifest.json" "$PWD/plugins/$language/$module" <<'EOF'
import json, os, sys
path, source = sys.argv[1], sys.argv[2]
manifest = json.load(open(path))
manifest["adopt"]["source"] = os.path.relpath(source, os.path.dirname(path))
json.dump(manifest, open(path, "w"), indent=2)
EOF
        done
        XDG_CACHE_HOME=$work/build-cache "$host" build --no-pin --catalogue "$catalogue" mesh-vault postgres >/dev/null 2>&1
    fi
    size=$(stat -c %s "$catalogue/modules/mesh-vault/adopt.wasm")
    cache=$work/cache-$language
    # One run of MODULE (default mesh-vault), its wall time in milliseconds (the clock read
    # around it) and its peak RSS in KiB.
    timed() {
        local start end rss
        local run=("$host" run "${1:-mesh-vault}" --catalogue "$catalogue" --catalog-source https://git.mesh.local/catalogue.git@v3.2.0)
        start=$(date +%s%N)
        XDG_CACHE_HOME=$cache /usr/bin/time -f '%M' -o "$work/rss" "${run[@]}" >/dev/null 2>&1
        rss=$(tail -1 "$work/rss")
        end=$(date +%s%N)
        echo "$(( (end - start) / 1000000 )) $rss"
    }
    cold=$(timed | awk '{ printf "%.1f", $1 / 1000 }')
    : > "$work/times"
    for _ in $(seq "$runs"); do timed >> "$work/times"; done
    wall=$(awk '{ print $1 }' "$work/times" | median)
    rss=$(awk '{ print $2 / 1024 }' "$work/times" | median)
    second=$(timed postgres | awk '{ printf "%.1f", $1 / 1000 }')
    printf '%-10s %12s %12s s %11s ms %10.1f MiB %14s s\n' "$language" "$size" "$cold" "$wall" "$rss" "$second"
done
