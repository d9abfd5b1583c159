package meshadopt

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// Two runs on one mesh: the second, started while the first holds the mesh's lock, is a
// *LockHeldError naming the first's process, and changes nothing; the first adopts.
func TestASecondRunIsKeptOutByTheLockHeld(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mesh := newStandIn(t)
	mesh.slow(t, "push", 3)
	first := runner(t, t.TempDir())
	var firstPid int
	first.Started = func(pid int) { firstPid = pid }
	taken := make(chan struct{})
	done := make(chan error, 1)
	options := mesh.options(t)
	options.OnEvent = func(e Event) {
		if lock, ok := e.(*LockEvent); ok && lock.Outcome == LockOutcomeTaken {
			close(taken)
		}
	}
	go func() {
		_, err := first.Run(ctx, options)
		done <- err
	}()
	select {
	case <-taken:
	case err := <-done:
		t.Fatalf("the first run ended before it took the lock: %v", err)
	}

	record := filepath.Join(t.TempDir(), "lock-held.jsonl")
	second := mesh.options(t)
	second.Record = record
	result, err := runner(t, t.TempDir()).Run(ctx, second)
	var held *LockHeldError
	if !errors.As(err, &held) {
		t.Fatalf("not kept out by the lock: %v (%#v)", err, err)
	}
	if held.Holder == nil || int(held.Holder.PID) != firstPid || held.ProcessGone {
		t.Fatalf("the holder: %+v, the first run's process %d", held.Holder, firstPid)
	}
	if result.Exit != ExitLockHeld || held.Code != EndingLockHeld || !held.Retry() {
		t.Fatalf("exit %d, code %q", result.Exit, held.Code)
	}
	if wait, ok := held.Remedy.Value.(*RemedyWaitForLock); !ok || wait.ID != held.Holder.ID {
		t.Fatalf("the remedy does not name the holder's lock: %#v", held.Remedy)
	}
	for _, outcome := range result.Outcomes {
		if _, ok := outcome.Outcome.Value.(*OutcomeNotRun); !ok {
			t.Errorf("%s moved: %#v", outcome.Module, outcome.Outcome.Value)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("the first run: %v", err)
	}
	if mesh.locked() {
		t.Fatal("the lock was not released")
	}
	capture(t, record, "lock-held")
}
