package meshadopt

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A run whose context ends is sent one SIGINT: it stops where it stands, lets the mesh's
// lock go, and is an *InterruptedError saying what was done and what was under way.
func TestACancelledRunIsInterruptedAndLetsItsLockGo(t *testing.T) {
	mesh := newStandIn(t)
	mesh.slow(t, "push", 30)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	record := filepath.Join(t.TempDir(), "interrupted.jsonl")
	options := mesh.options(t)
	options.Record = record
	options.OnEvent = func(e Event) {
		if started, ok := e.(*StartedEvent); ok && len(started.Args) > 0 && started.Args[0] == "push" {
			cancel()
		}
	}
	state := t.TempDir()
	began := time.Now()
	result, err := runner(t, state).Run(ctx, options)
	var interrupted *InterruptedError
	if !errors.As(err, &interrupted) {
		t.Fatalf("not interrupted: %v (%#v)", err, err)
	}
	if !errors.Is(err, context.Canceled) || result.Exit != ExitInterrupted || interrupted.Signal != "SIGINT" {
		t.Fatalf("%+v, exit %d", interrupted, result.Exit)
	}
	if len(interrupted.Done) == 0 || interrupted.InFlight == nil || interrupted.InFlight.Args[0] != "push" {
		t.Fatalf("done %+v, in flight %+v", interrupted.Done, interrupted.InFlight)
	}
	if time.Since(began) > 25*time.Second {
		t.Fatalf("the run took %s to stop: it waited for the push", time.Since(began))
	}
	assertNoLock(t, mesh, state)
	capture(t, record, "interrupted")
}

// assertNoLock checks, as an operator's `mesh-adopt check` would, that no lock is held on
// the stand-ins' mesh by the runs of the state directory state.
func assertNoLock(t *testing.T, mesh *standIn, state string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for mesh.locked() && time.Now().Before(deadline) {
		// A push under way is let finish before its lock goes (the fence).
		time.Sleep(100 * time.Millisecond)
	}
	options := mesh.options(t)
	result, err := runner(t, state).Check(context.Background(), options)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	for _, lock := range result.Locks {
		t.Errorf("check sees a lock: %s, held by %+v", lock.Outcome, lock.Holder)
	}
}

// A context already ended when the command starts: the runner waits for the command to take
// SIGINT over (its first line) before sending it, so the command stops as an interrupted
// run does, and the error is an *InterruptedError wrapping the context's.
func TestAContextEndedBeforeTheCommandStartedStopsItAsAnInterrupt(t *testing.T) {
	mesh := newStandIn(t)
	mesh.slow(t, "push", 30)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	began := time.Now()
	result, err := runner(t, t.TempDir()).Run(ctx, mesh.options(t))
	if time.Since(began) > 25*time.Second {
		t.Fatalf("the run took %s to stop", time.Since(began))
	}
	if result.Exit != ExitInterrupted {
		t.Fatalf("exit %d: the command did not answer the SIGINT as an interrupt", result.Exit)
	}
	var interrupted *InterruptedError
	if !errors.As(err, &interrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("not an interrupt wrapping the context's error: %v (%#v)", err, err)
	}
}
