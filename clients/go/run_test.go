package meshadopt

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const catalogSource = "https://git.mesh.local/catalogue.git@v3.2.0"

// Phase three adopted on the simulated mesh: every event streamed in order, from `run` to
// `end`, each module adopted, no error.
func TestRunAdoptsPhaseThreeOnTheSimulator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	record := filepath.Join(t.TempDir(), "run.jsonl")
	var kinds []string
	result, err := runner(t, t.TempDir()).Run(ctx, Options{
		CatalogSource: catalogSource,
		Credentials:   credentials(t),
		Record:        record,
		OnEvent:       func(e Event) { kinds = append(kinds, e.Kind()) },
	})
	if err != nil {
		t.Fatalf("phase three did not adopt: %v", err)
	}
	if result.Exit != 0 || kinds[0] != "run" || kinds[len(kinds)-1] != "end" {
		t.Fatalf("exit %d, events %v", result.Exit, kinds)
	}
	if len(result.Outcomes) != 3 {
		t.Fatalf("outcomes: %d", len(result.Outcomes))
	}
	for _, outcome := range result.Outcomes {
		if _, ok := outcome.Outcome.Value.(*OutcomeAdopted); !ok || !outcome.Succeeded {
			t.Errorf("%s: %#v", outcome.Module, outcome.Outcome.Value)
		}
	}
	if !result.Summary.Succeeded || result.Summary.Rules != CheckedWordVerified {
		t.Errorf("summary: %+v", result.Summary)
	}
	capture(t, record, "success")
}

// A check changes nothing and plans every module.
func TestCheckPlansEveryModule(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	result, err := runner(t, t.TempDir()).Check(ctx, Options{CatalogSource: catalogSource, Credentials: credentials(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(result.Plans) != 3 || result.Run.Command != CommandCheck || result.Effect == nil {
		t.Fatalf("%+v", result)
	}
}

// A module that refuses is a *RefusedError naming it and why; nothing after it moves.
func TestARefusalIsARefusedError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	record := filepath.Join(t.TempDir(), "refused.jsonl")
	// No catalogue source: the modules that must be built have nowhere to be built from.
	result, err := runner(t, t.TempDir()).Run(ctx, Options{Credentials: credentials(t), Record: record})
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("not a refusal: %v (%#v)", err, err)
	}
	if refused.Module == "" || refused.Message == "" || result.Exit != ExitFailed {
		t.Fatalf("%+v, exit %d", refused, result.Exit)
	}
	capture(t, record, "refusal")
}

// Credentials that cannot be used are an *UnusableError, the command's own input, exit 2.
func TestUnusableCredentialsAreAnUnusableError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	result, err := runner(t, t.TempDir()).Run(ctx, Options{
		CatalogSource: catalogSource,
		Credentials:   map[string]string{"store-superuser": "   "},
	})
	var unusable *UnusableError
	if !errors.As(err, &unusable) || result.Exit != ExitBadInput {
		t.Fatalf("%v (%#v), exit %d", err, err, result.Exit)
	}
}

// A catalogue whose module would mount what genesis's store holds: preflight predicts the
// rule broken and does nothing; the error names the rule, the module and the container, and
// the end's code says it was predicted.
func TestARuleBrokenIsARuleBrokenError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "catalogue")
	copyTree(t, catalogue(t), dir)
	manifest := filepath.Join(dir, "modules", "mesh-vault", "manifest.json")
	var m map[string]interface{}
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["resources"].([]interface{})[0].(map[string]interface{})["volumes"] = []string{"/var/lib/mesh/store:/var/lib/vault"}
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, data, 0o644); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "rule-broken.jsonl")
	result, err := runner(t, t.TempDir()).Run(ctx, Options{
		Catalogue: dir, CatalogSource: catalogSource, Credentials: credentials(t), Record: record,
	})
	var broken *RuleBrokenError
	if !errors.As(err, &broken) || result.Exit != ExitFailed || broken.Code != EndingRuleWouldBreak {
		t.Fatalf("not a rule predicted broken: %v (%#v), exit %d", err, err, result.Exit)
	}
	v := broken.Violations[0]
	if v.Invariant != RuleGenesisVolumesHeldOnce || v.Module == nil || *v.Module != "mesh-vault" || v.Container == nil || *v.Container != "mesh-vault" {
		t.Fatalf("%+v", v)
	}
	capture(t, record, "rule-broken")
}

// copyTree copies the directory from to to, files and all.
func copyTree(t testing.TB, from, to string) {
	err := filepath.WalkDir(from, func(path string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		target := filepath.Join(to, rel)
		if entry.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
