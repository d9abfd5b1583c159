package meshadopt

import (
	"context"
	"errors"
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
