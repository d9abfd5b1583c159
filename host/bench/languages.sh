#!/usr/bin/env bash
# What a plugin costs in each language, side by side in one run: its size; its first run (a
# whole-process `mesh-adopt run mesh-vault` with an empty compile cache: wall time, peak
# resident memory, and the code it compiled: baseline for a plugin over 1 MiB); warm runs on
# the code that first run kept (median wall time and peak memory of RUNS runs); how long
# `mesh-adopt cache optimise` takes to make its optimised code, and warm runs on that; then the
# first run of a second plugin of the language, `postgres`, with the cache the first left, for
# the shipped Rust plugins and the JavaScript and Python ports in plugins/js and plugins/python.
#
# Run by `just bench-langs` (after `just setup-langs`), with a release build of the host.
set -euo pipefail
cd "$(dirname "$0")/../.."

runs=${RUNS:-15}
host=$PWD/target/release/mesh-adopt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-8s %10s %16s %9s %20s %10s %20s %8s\n' language "size (B)" "first run" code "warm run, its code" optimise "warm run, optimised" second
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
        # Built with a cache of its own: the runs below start from an empty one.
        XDG_CACHE_HOME=$work/build-cache "$host" build --no-pin --catalogue "$catalogue" mesh-vault postgres >/dev/null 2>&1
    fi
    size=$(stat -c %s "$catalogue/modules/mesh-vault/adopt.wasm")
    cache=$work/cache-$language
    # One run of MODULE (default mesh-vault): its wall time in milliseconds (the clock read
    # around it) and its peak RSS in KiB; its --json stream is left in $work/events.
    timed() {
        local start end
        start=$(date +%s%N)
        XDG_CACHE_HOME=$cache /usr/bin/time -f '%M' -o "$work/rss" "$host" run "${1:-mesh-vault}" \
            --catalogue "$catalogue" --catalog-source https://git.mesh.local/catalogue.git@v3.2.0 --json \
            >"$work/events" 2>/dev/null
        end=$(date +%s%N)
        echo "$(( (end - start) / 1000000 )) $(tail -1 "$work/rss")"
    }
    # RUNS warm runs of mesh-vault: the median wall time (ms) and peak RSS (MiB).
    warm() {
        : > "$work/times"
        for _ in $(seq "$runs"); do timed >> "$work/times"; done
        echo "$(awk '{ print $1 }' "$work/times" | median) $(awk '{ print $2 / 1024 }' "$work/times" | median)"
    }
    read -r first_ms first_kib < <(timed)
    code=$(grep -o '"code":"[a-z]*"' "$work/events" | head -1 | cut -d'"' -f4)
    read -r warm_ms warm_mib < <(warm)
    start=$(date +%s%N)
    XDG_CACHE_HOME=$cache "$host" cache optimise mesh-vault --catalogue "$catalogue" >/dev/null
    optimise_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    read -r optimised_ms optimised_mib < <(warm)
    read -r second_ms _ < <(timed postgres)
    awk -v l="$language" -v size="$size" -v fms="$first_ms" -v fkib="$first_kib" -v code="$code" \
        -v wms="$warm_ms" -v wmib="$warm_mib" -v oms="$optimise_ms" -v ows="$optimised_ms" \
        -v omib="$optimised_mib" -v sms="$second_ms" 'BEGIN {
            printf "%-8s %10d %6.2f s %5.0f MiB %9s %6d ms %6.1f MiB %8.2f s %6d ms %6.1f MiB %6.2f s\n",
                l, size, fms / 1000, fkib / 1024, code, wms, wmib, oms / 1000, ows, omib, sms / 1000 }'
done
