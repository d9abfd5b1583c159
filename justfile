# mesh-adopt: the host, its plugins, and the example catalogue they adopt.

# List the recipes.
default:
    @just --list

### setup

# Install what building needs: the wasm32-wasip2 target (a no-op once installed).
setup:
    @rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2

# Install the toolchains JavaScript and Python plugins are built with, from the npm and
# Python registries: componentize-js, jco and esbuild into plugins/js/node_modules (from its
# lock file), componentize-py and the Python SDK into plugins/python/.venv. Each is done
# again only when what it installs from has changed (the Python SDK's WIT is a link to
# plugins/sdk/wit, so that is looked at too); the SDK's build directory goes first, so no
# module an older SDK had is installed again from it.
setup-langs:
    @[ plugins/js/node_modules/.package-lock.json -nt plugins/js/package-lock.json ] || \
        npm ci --prefix plugins/js --no-audit --no-fund --loglevel=error
    @[ -x plugins/python/.venv/bin/python ] || python3 -m venv plugins/python/.venv
    @[ -z "$(find plugins/python/requirements.txt plugins/python/sdk plugins/sdk/wit -newer plugins/python/.venv/.installed -not -path '*/__pycache__*' 2>/dev/null; [ -e plugins/python/.venv/.installed ] || echo new)" ] || \
        (rm -rf plugins/python/sdk/build && plugins/python/.venv/bin/pip install --quiet --disable-pip-version-check --force-reinstall --no-deps ./plugins/python/sdk \
        && plugins/python/.venv/bin/pip install --quiet --disable-pip-version-check -r plugins/python/requirements.txt \
        && touch plugins/python/.venv/.installed)

# Install what the tests need beyond that: the machine's parts, and the other languages'
# toolchains for the conformance suite.
setup-test: setup setup-langs setup-machine

# The machine's parts the tests run: Go for the Go client's tests (Debian's golang-go), a
# NATS server for the live backend's tests, man and groff for the manual pages' (Debian's
# man-db and groff-base), and the reference node (as root: podman, runc and mmdebstrap from
# Debian, and its images, built once and kept; node/README.md). One after the other: each
# installs Debian packages.
setup-machine:
    @command -v go >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go)
    @command -v nats-server >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server)
    @(command -v man && command -v groff) >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq man-db groff-base)
    @node/setup

### build

# Build every plugin: the tests' own, then each catalogue module's from the source its manifest
# names, placed beside the manifest by `mesh-adopt build` (unpinned: here plugins are build
# products, not shipped files).
build-plugins: setup build-test-plugins
    cargo run --quiet -- build --no-pin

# The tests' plugins, built with the path mapping `mesh-adopt build` gives the catalogue's, so
# the two builds share their dependencies instead of rebuilding them in turn. The misbehaving
# plugins are examples of the crates in tests/plugins, one component a file, so examples are
# built beside the libraries.
build-test-plugins:
    cargo build --quiet --release --target wasm32-wasip2 --manifest-path plugins/Cargo.toml --lib --examples \
        --config "target.wasm32-wasip2.rustflags=[\"--remap-path-prefix=$(realpath "${CARGO_HOME:-$HOME/.cargo}")=/cargo\"]"

# Build the host.
build: build-plugins
    cargo build --quiet

### run

# Adopt phase three (postgres, nats, mesh-vault) on the simulated mesh.
demo: build
    cargo run --quiet -- run --catalog-source https://git.mesh.local/catalogue.git@v3.2.0

# The operator's demo on the reference node, as root: genesis with data, phase three adopted live, the data read back.
live-demo: setup
    node/demo up
    node/demo adopt
    node/demo read

# Tear the live demo down: its containers, state and catalogue repository; the images stay.
live-down:
    node/demo down

### check

# Run every test: the plugins' own, then the host's against the real plugins.
# The host and its tests build in one cargo invocation (a `cargo build` then a `cargo test`
# would leave a core idle through each one's longest crate), and everything else the tests
# need runs beside it at the lowest priority, in the cores' gaps: the toolchains' downloads
# and the other SDKs' tests, the wasm plugins, the Rust SDK's tests and its packaging, the
# machine's parts (the reference node's images are built from Debian packages). The
# host's build is the longest and holds the tests back, so it is never the one kept waiting.
# The builds use separate directories (the plugins' for wasm32-wasip2 in release, for the
# host target in debug; the host's), so none waits on another's lock.
test: setup
    @nice -n 19 just test-langs & langs=$!; \
        nice -n 19 just build-test-plugins & plugins=$!; \
        nice -n 19 just test-sdk & sdk=$!; \
        nice -n 19 just setup-machine & machine=$!; \
        cargo test --quiet --no-run; host=$?; \
        wait $langs; langs=$?; wait $plugins; plugins=$?; wait $sdk; sdk=$?; wait $machine; machine=$?; \
        [ "$langs$plugins$sdk$machine$host" = 00000 ]
    @just setup-test
    cargo run --quiet -- build --no-pin
    just test-go
    cargo test --quiet
    just embed-check

# The Go client's tests (clients/go), against the built command (MESH_ADOPT_BIN, else cargo's
# debug build) and the placed plugins: go vet, then every test, offline (the client uses the
# standard library only).
test-go:
    cd clients/go && GOPROXY=off GOFLAGS=-mod=mod go vet ./...
    cd clients/go && GOPROXY=off GOFLAGS=-mod=mod MESH_ADOPT_BIN="${MESH_ADOPT_BIN:-$(realpath "${CARGO_TARGET_DIR:-../../target}")/debug/mesh-adopt}" go test -count=1 ./...

# Capture the Go client's sample streams again (clients/go/testdata/*.jsonl: a success, a
# refusal, a rule broken, a lock held, an interrupt), from real runs of the built
# command, as test-go runs it.
go-streams:
    cd clients/go && GOPROXY=off GOFLAGS=-mod=mod MESH_ADOPT_BIN="${MESH_ADOPT_BIN:-$(realpath "${CARGO_TARGET_DIR:-../../target}")/debug/mesh-adopt}" MESHADOPT_UPDATE_TESTDATA=1 go test -count=1 -run 'TestRunAdopts|TestARefusal|TestARuleBroken|TestASecondRun|TestACancelledRun' .

# The JavaScript and Python SDKs' unit tests, with the toolchains they are built with.
test-langs: setup-langs
    npm test --prefix plugins/js --silent
    cd plugins/python/sdk && ../.venv/bin/python -m unittest --quiet

# The Rust SDK's and the manifest crate's unit tests (for the host target), then the two
# packaged as a catalogue gets them.
test-sdk:
    cargo test --quiet --manifest-path plugins/Cargo.toml -p mesh-adopt-manifest -p mesh-adopt-sdk --target {{arch()}}-unknown-linux-gnu
    just sdk-package

# Package the SDK with the manifest crate it depends on, as a catalogue gets them, and build
# each package. Offline: the SDK's unit tests have fetched every dependency. For the host target,
# so the verifying build reuses what the SDK's unit tests compiled. Dirty trees allowed, so it
# runs while editing; the packages land in plugins/target/package.
# Cargo takes a packaged crate of an unchanged version for unchanged: it keeps the manifest
# crate's first extraction from its overlay registry (under CARGO_HOME, in a registry named
# `-<hash>`) and its build, so both go first, or the SDK would be verified against a stale one.
sdk-package:
    rm -rf plugins/target/package "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/mesh-adopt-manifest-*
    cargo clean --quiet -p mesh-adopt-manifest --target {{arch()}}-unknown-linux-gnu --manifest-path plugins/Cargo.toml
    cargo package --quiet --offline --allow-dirty --manifest-path plugins/Cargo.toml -p mesh-adopt-manifest -p mesh-adopt-sdk --target {{arch()}}-unknown-linux-gnu

# The runtime embeds without the command's dependencies, and the embedding example adopts phase three.
embed-check:
    @! cargo tree --offline -p mesh-adopt-embed-example -e normal,build --prefix none | grep -E '^(clap|indicatif|ureq|toml) ' || (echo "the embedding example's tree holds a command-line dependency"; exit 1)
    @# Built beside the command, so both take one set of features and share one build of wasmtime.
    cargo build --quiet -p mesh-adopt -p mesh-adopt-embed-example
    ./target/debug/mesh-adopt-embed-example

# Write docs/events.schema.json again from the types that write the event stream, and keep it
# as docs/schema/events-N.json of its version (a test fails while either differs from them,
# and while a released version's file is not as it was released).
schema:
    cargo run --quiet -p mesh-adopt-runtime --example events-schema > docs/events.schema.json
    v=$(grep -m1 -o '"mesh-adopt event, schema [0-9]*"' docs/events.schema.json | tr -dc 0-9); cp docs/events.schema.json docs/schema/events-$v.json

# Write the Go client's event types again (clients/go/events_gen.go) from the types that
# write the event stream (a test fails while the file differs from them).
go-types:
    cargo run --quiet -p mesh-adopt-runtime --example events-go > clients/go/events_gen.go

# Benchmarks: criterion (compile, load, host call, phase three vs native, sweep), the fleet, then `mesh-adopt test --sweep`.
bench: build-plugins
    cargo bench -p mesh-adopt-bench --bench adoption
    cargo build --quiet --release --example fleet
    for n in 1 100 1000; do for run in 1 2 3; do ./target/release/examples/fleet $n 64; done; done
    cargo build --quiet --release
    cargo build --quiet
    for build in release debug; do for run in 1 2 3 4 5; do \
        /usr/bin/time -f "$build: %e s wall, %U s user, %S s system" ./target/$build/mesh-adopt test --sweep | tail -1; \
    done; done

# The shipped scenarios' fault sweep, this host against the host at REV, in turn (RUNS=11).
bench-sweep REV:
    host/bench/sweep-against.sh {{REV}}

# What a plugin costs in each language, in one run: size, cold compile, warm whole-process run.
bench-langs: setup-langs build-plugins
    cargo build --quiet --release
    host/bench/languages.sh

# Formatting and clippy, host and plugins, warnings as errors.
lint:
    cargo fmt --all --check
    cargo fmt --all --check --manifest-path plugins/Cargo.toml
    cargo clippy --quiet --workspace --all-targets -- -D warnings
    cargo clippy --quiet --release --target wasm32-wasip2 --manifest-path plugins/Cargo.toml --lib --examples -- -D warnings

# What CI runs.
ci: lint test
