#!/usr/bin/env bash
# The fault sweep of the shipped scenarios, this host side by side with the host at another
# revision: both release builds, on the scenarios both can read (a newer scenario may use keys
# the older host does not know), against this checkout's catalogue, run in turn (this, that,
# this, …) so the machine's noise falls on both alike. Prints the medians of wall and user
# time and the median of the pair-by-pair ratios of wall time.
#
# Run by `just bench-sweep REV` (RUNS=11 by default); the other host is built once, in a
# worktree beside this checkout (../mesh-adopt-at-REV), and kept for the next time.
set -euo pipefail
cd "$(dirname "$0")/../.."

rev=${1:?usage: sweep-against.sh REV}
runs=${RUNS:-11}
here=$PWD/target/release/mesh-adopt
there_tree=$PWD/../mesh-adopt-at-$rev
there=$there_tree/target/release/mesh-adopt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build --quiet --release -p mesh-adopt
if [ ! -x "$there" ]; then
    [ -d "$there_tree" ] || git worktree add --detach "$there_tree" "$rev" >/dev/null
    (cd "$there_tree" && cargo build --quiet --release -p mesh-adopt)
fi

scenarios=()
for file in catalogue/scenarios/*.toml plugins/*/scenarios/*.toml; do
    if "$there" test --catalogue catalogue "$file" >/dev/null 2>&1; then scenarios+=("$file"); fi
done
echo "${#scenarios[@]} scenarios both hosts read; $runs runs each, in turn"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One sweep by host $1: "wall user" in seconds (wall read on the clock around it, to the
# millisecond). A sweep that fails stops the measurement.
sweep() {
    local start end
    start=$(date +%s%N)
    /usr/bin/time -f '%U' -o "$work/time" "$1" test --catalogue catalogue --sweep "${scenarios[@]}" >/dev/null
    end=$(date +%s%N)
    echo "$(( (end - start) / 1000000 )) $(cat "$work/time")" | awk '{ printf "%.3f %s\n", $1 / 1000, $2 }'
}

sweep "$here" >/dev/null && sweep "$there" >/dev/null # warm the page cache and the compile cache
: > "$work/here" && : > "$work/there"
for _ in $(seq "$runs"); do
    sweep "$here" >> "$work/here"
    sweep "$there" >> "$work/there"
done
paste "$work/here" "$work/there" | awk '{ printf "%.3f\n", $1 / $3 }' > "$work/ratios"
printf '%-22s %10s %10s\n' "" "wall (s)" "user (s)"
printf '%-22s %10s %10s\n' "at $rev" "$(awk '{ print $1 }' "$work/there" | median)" "$(awk '{ print $2 }' "$work/there" | median)"
printf '%-22s %10s %10s\n' "this checkout" "$(awk '{ print $1 }' "$work/here" | median)" "$(awk '{ print $2 }' "$work/here" | median)"
printf 'wall, this / that, pair by pair: median %s (%s to %s)\n' "$(median < "$work/ratios")" \
    "$(sort -n "$work/ratios" | head -1)" "$(sort -n "$work/ratios" | tail -1)"
