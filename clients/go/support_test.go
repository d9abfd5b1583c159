package meshadopt

// What the tests share: the built mesh-adopt, the project's example catalogue, and the live
// mesh's stand-ins (tests/live/) the Rust tests use, for what the simulator cannot show: a
// run that holds the mesh's lock long enough for another to be kept out, or to be stopped
// half-way.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// root is the project's top directory.
func root(t testing.TB) string {
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// binary is the mesh-adopt under test: $MESH_ADOPT_BIN, else the project's debug build.
func binary(t testing.TB) string {
	path := os.Getenv("MESH_ADOPT_BIN")
	if path == "" {
		path = filepath.Join(root(t), "target", "debug", "mesh-adopt")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("mesh-adopt is not built at %s (cargo build, or set MESH_ADOPT_BIN): %v", path, err)
	}
	return path
}

// catalogue is the project's example catalogue, its plugins placed (`just build-plugins`).
func catalogue(t testing.TB) string {
	dir := filepath.Join(root(t), "catalogue")
	for _, module := range []string{"postgres", "nats", "mesh-vault"} {
		if _, err := os.Stat(filepath.Join(dir, "modules", module, "adopt.wasm")); err != nil {
			t.Fatalf("the catalogue's plugins are not placed (just build-plugins): %v", err)
		}
	}
	return dir
}

// credentials are the example catalogue's genesis credentials, as an installer holds them.
func credentials(t testing.TB) map[string]string {
	dir := filepath.Join(catalogue(t), "genesis", "credentials")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{}
	for _, entry := range entries {
		value, err := os.ReadFile(filepath.Join(dir, entry.Name()))
		if err != nil {
			t.Fatal(err)
		}
		values[entry.Name()] = strings.TrimSuffix(string(value), "\n")
	}
	return values
}

// runner is a Runner of the built mesh-adopt with its own state directory (so this machine's
// locks are the test's alone) and the user's compile cache (so each plugin compiles once).
func runner(t testing.TB, state string) *Runner {
	return &Runner{Binary: binary(t), Dir: root(t), Env: []string{"XDG_STATE_HOME=" + state}}
}

// standIn is the live mesh's stand-ins' state: the control plane and container engine of
// tests/live, genesis's containers raised, a configuration that reaches them with the mesh's
// own lock, fenced.
type standIn struct {
	state  string
	config string
}

func newStandIn(t testing.TB) *standIn {
	state := t.TempDir()
	var bundle struct {
		Resources []map[string]interface{} `json:"resources"`
	}
	data, err := os.ReadFile(filepath.Join(catalogue(t), "foundation.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &bundle); err != nil {
		t.Fatal(err)
	}
	var raised []map[string]interface{}
	for _, resource := range bundle.Resources {
		if name := resource["name"]; name == "mesh-store" || name == "mesh-bus" {
			raised = append(raised, resource)
		}
	}
	raisedPath := filepath.Join(state, "raised.json")
	data, _ = json.Marshal(map[string]interface{}{"resources": raised})
	if err := os.WriteFile(raisedPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	control := filepath.Join(root(t), "tests", "live", "control-plane")
	engine := filepath.Join(root(t), "tests", "live", "container-engine")
	genesis := exec.Command(control, "genesis", raisedPath)
	genesis.Env = append(os.Environ(), "STANDIN_STATE="+state)
	if out, err := genesis.CombinedOutput(); err != nil {
		t.Fatalf("the stand-in's genesis: %v\n%s", err, out)
	}
	for _, log := range []string{"argv.log", "env.log"} {
		_ = os.Remove(filepath.Join(state, log))
	}
	env := "STANDIN_STATE=" + state
	verb := func(words ...string) string {
		quoted := []string{`"env"`, fmt.Sprintf("%q", env), fmt.Sprintf("%q", control)}
		for _, w := range words {
			quoted = append(quoted, fmt.Sprintf("%q", w))
		}
		return "[" + strings.Join(quoted, ", ") + "]"
	}
	config := strings.Join([]string{
		"lock = " + verb("lock"),
		"unlock = " + verb("unlock", "{id}"),
		"lock_holder = " + verb("lock-holder"),
		"lock_fences = true",
		"control = " + verb(),
		"carry = " + verb("carry", "{remote}"),
		"carry_secret = " + verb("carry", "--secret", "{remote}"),
		fmt.Sprintf("inspect = [\"env\", %q, %q, \"inspect\", \"{container}\"]", env, engine),
		`inspect_absent = "No such object"`,
		"fetch_timeout_seconds = 2",
		"",
	}, "\n")
	path := filepath.Join(state, "mesh-adopt.toml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return &standIn{state: state, config: path}
}

// slow makes the stand-in's `verb` take seconds.
func (s *standIn) slow(t testing.TB, verb string, seconds int) {
	if err := os.WriteFile(filepath.Join(s.state, "slow-"+verb), []byte(fmt.Sprint(seconds)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// locked reports whether the stand-in's control plane holds a lock.
func (s *standIn) locked() bool {
	_, err := os.Stat(filepath.Join(s.state, "lock.json"))
	return err == nil
}

// options are a live run of postgres alone (which needs no bus) on the stand-ins.
func (s *standIn) options(t testing.TB) Options {
	return Options{
		Modules:       []string{"postgres"},
		Mesh:          "live",
		Config:        s.config,
		CatalogSource: "https://git.mesh.test/c.git",
		Credentials:   credentials(t),
	}
}

// capture keeps the stream recorded at record as testdata/name.jsonl when
// MESHADOPT_UPDATE_TESTDATA is set (`just go-streams`): the captured streams the decoding
// test reads are real ones, made again whenever the stream changes.
func capture(t testing.TB, record, name string) {
	if os.Getenv("MESHADOPT_UPDATE_TESTDATA") == "" {
		return
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
