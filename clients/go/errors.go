package meshadopt

import (
	"fmt"
	"strings"
)

// Exit statuses the command ends with (docs/operating.md's table).
const (
	// ExitOK: every module adopted (or checked) and every rule held.
	ExitOK = 0
	// ExitFailed: a module refused, a rule broke, a lock could not be taken or let go, ….
	ExitFailed = 1
	// ExitBadInput: an input could not be used; nothing was changed.
	ExitBadInput = 2
	// ExitLockHeld: another run holds the mesh's lock (sysexits' EX_TEMPFAIL); nothing was
	// done, and the same run later may pass. The end event's code is lock-held.
	ExitLockHeld = 75
	// ExitInterrupted: SIGINT or SIGTERM stopped it.
	ExitInterrupted = 130
)

// LockHeldError: another run holds the mesh's lock, so this one changed nothing. Retry
// later, or, when ProcessGone, break the lock as Remedy says (mesh-adopt unlock ID).
type LockHeldError struct {
	// Holder is who holds it: host, process, command, since; nil when the mesh did not say.
	Holder *LockHolder
	// ProcessGone is whether the holder's process is known to be gone, leaving the lock behind.
	ProcessGone bool
	// Remedy is what mends it: wait-for-lock with the holder's lock id, or unlock when its
	// process is known gone.
	Remedy *Remedy
	// Code is the end event's: lock-held (exit 75), or lock-abandoned (exit 1) for a holder
	// known gone.
	Code Ending
	// Exit is the command's exit status.
	Exit int
}

// Retry says whether running the same command later may pass: the lock is another run's,
// and it goes at that run's end.
func (e *LockHeldError) Retry() bool { return e.Code == EndingLockHeld }

func (e *LockHeldError) Error() string {
	if e.Holder == nil {
		return "the mesh is locked by another run"
	}
	gone := ""
	if e.ProcessGone {
		gone = " (its process is gone: `mesh-adopt unlock " + e.Holder.ID + "` breaks the lock)"
	}
	return fmt.Sprintf("the mesh is locked by process %d on host %q since %s, running %q%s",
		e.Holder.PID, e.Holder.Host, e.Holder.Since, e.Holder.Command, gone)
}

// LockError: the mesh's lock could not be taken, released or read, or was broken under the
// run (the lock event's Outcome says which); Remedy says how it is mended.
type LockError struct {
	// Event is the lock event that said so.
	Event *LockEvent
	// Exit is the command's exit status.
	Exit int
}

func (e *LockError) Error() string {
	message := ""
	if e.Event.Message != nil {
		message = ": " + *e.Event.Message
	}
	return fmt.Sprintf("the mesh's lock %s%s", e.Event.Outcome, message)
}

// RefusedError: a module's plugin refused, or the host refused its work, naming why; nothing
// of it moved past the refusal.
type RefusedError struct {
	// Module is the module refused.
	Module string
	// Code is the refusal's code, when it has one (the plugin's, or the host's own).
	Code string
	// Message is the refusal in words.
	Message string
	// Refusal is the outcome as the stream wrote it, with every field the schema has.
	Refusal *OutcomeRefused
}

// Remedy is what mends the refusal, when the stream says: nil until a refusal carries one.
func (e *RefusedError) Remedy() *Remedy {
	if e.Refusal == nil {
		return nil
	}
	return remedyOf(e.Refusal)
}

func (e *RefusedError) Error() string {
	code := ""
	if e.Code != "" {
		code = " (" + e.Code + ")"
	}
	return fmt.Sprintf("%s refused%s: %s", e.Module, code, e.Message)
}

// UnusableError: an input could not be used (a module's manifest, plugin or credential, or
// the command's own input when Module is empty); nothing was changed.
type UnusableError struct {
	// Module is the module whose input it was; empty for the command's own (an option, the
	// catalogue, the foundation: the stream's only line was an error).
	Module string
	// Message is what could not be used, and why.
	Message string
	// Unusable is the module's outcome as the stream wrote it, when it was a module's.
	Unusable *OutcomeUnusable
	// Error is the error event, when the command could not start or stopped on an error.
	ErrorEvent *ErrorEvent
}

// Remedy is what mends the input, when the stream says: nil until an outcome carries one.
func (e *UnusableError) Remedy() *Remedy {
	switch {
	case e.Unusable != nil:
		return remedyOf(e.Unusable)
	case e.ErrorEvent != nil:
		return remedyOf(e.ErrorEvent)
	}
	return nil
}

func (e *UnusableError) Error() string {
	if e.Module == "" {
		return e.Message
	}
	return fmt.Sprintf("%s is unusable: %s", e.Module, e.Message)
}

// RuleBrokenError: a rule of the mesh broke, predicted in preflight or verified after a push.
type RuleBrokenError struct {
	// Violations are the rules broken, each with what broke it: its module and container,
	// where one did and one is concerned, and its remedy.
	Violations []ViolationRecord
	// Code is the end event's: rule-would-break (predicted: nothing was done) or rule-broken
	// (found after a push).
	Code Ending
	// Remedy is the end event's: what mends it.
	Remedy *Remedy
}

func (e *RuleBrokenError) Error() string {
	words := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		words = append(words, fmt.Sprintf("%s: %s", v.Invariant, v.Detail))
	}
	return "a rule of the mesh broke: " + strings.Join(words, "; ")
}

// ModuleFailedError: a module's adopt was incomplete, or the sandbox stopped its plugin.
type ModuleFailedError struct {
	// Module is the module.
	Module string
	// Outcome is its outcome as the stream wrote it.
	Outcome *OutcomeEvent
}

func (e *ModuleFailedError) Error() string {
	switch o := e.Outcome.Outcome.Value.(type) {
	case *OutcomeIncomplete:
		return fmt.Sprintf("%s: adopt was incomplete: %s", e.Module, o.Report)
	case *OutcomeFailed:
		return fmt.Sprintf("%s failed (%s): %s", e.Module, o.Stop, o.Message)
	}
	return e.Module + " did not succeed"
}

// InterruptedError: the command was stopped by a signal (the runner's, when its context
// ended) before its end; Done and InFlight say how far it went.
type InterruptedError struct {
	// Signal is SIGINT or SIGTERM.
	Signal string
	// Done are the effects that had reached the mesh, in order.
	Done []Effect
	// InFlight is the carry or tell under way, and whether it landed; nil when none was.
	InFlight *InFlight
	// LockLeft is the run's lock id when it could not be let go (mesh-adopt unlock ID).
	LockLeft string
	// Unreported is true when the command ended before it wrote its `interrupted` event
	// (killed past the grace, or by a signal before it could answer): Done and InFlight are
	// then unknown, and the events read so far (the Result) are all there is; a lock it
	// held is shown by the next run or `mesh-adopt check`.
	Unreported bool
	// Cause is the context's error, when the runner's context ended it.
	Cause error
}

func (e *InterruptedError) Error() string {
	if e.Unreported {
		return fmt.Sprintf("interrupted by %s before it could say what it had done", e.Signal)
	}
	text := fmt.Sprintf("interrupted by %s after %d effects", e.Signal, len(e.Done))
	if e.InFlight != nil {
		text += fmt.Sprintf(", %s %s under way (%s)", e.InFlight.Op, strings.Join(e.InFlight.Args, " "), e.InFlight.Landing)
	}
	if e.LockLeft != "" {
		text += ", its lock left: mesh-adopt unlock " + e.LockLeft
	}
	return text
}

// Unwrap is the context's error, so errors.Is(err, context.Canceled) holds for a cancelled run.
func (e *InterruptedError) Unwrap() error { return e.Cause }

// ExitError: the command ended otherwise than the other errors say (a replay diverged, a
// stream cut short by a kill); Stderr is the end of what it wrote there.
type ExitError struct {
	// Exit is the exit status, -1 when a signal ended it.
	Exit int
	// Last is the stream's last line, nil when there was none.
	Last Event
	// Stderr is the end of the command's standard error.
	Stderr string
}

func (e *ExitError) Error() string {
	last := "no event"
	if e.Last != nil {
		last = "its last event `" + e.Last.Kind() + "`"
	}
	return fmt.Sprintf("mesh-adopt exited %d after %s: %s", e.Exit, last, strings.TrimSpace(e.Stderr))
}

// StreamError: a line of the stream could not be read as this version's events (another
// schema, a field unknown); the command's own status is in Exit.
type StreamError struct {
	// Line is the line's number, from 1.
	Line int
	// Err is why.
	Err error
	// Exit is the command's exit status.
	Exit int
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("line %d of mesh-adopt's stream: %v", e.Line, e.Err)
}

// Unwrap is why the line could not be read.
func (e *StreamError) Unwrap() error { return e.Err }

// remedyOf is what mends what event says, when its type has a remedy (the generated RemedyOf):
// one given to refusals or errors later reaches these errors as soon as the types are made
// again.
func remedyOf(event interface{}) *Remedy {
	if holder, ok := event.(interface{ RemedyOf() *Remedy }); ok {
		return holder.RemedyOf()
	}
	return nil
}

// errorOf is the error a finished command's status and events make, nil for success.
func errorOf(result *Result, stderr string, cause error) error {
	if interrupted, ok := result.Last.(*InterruptedEvent); ok {
		err := &InterruptedError{Signal: interrupted.Signal, Done: interrupted.Done, InFlight: interrupted.InFlight, Cause: cause}
		if interrupted.LockLeft != nil {
			err.LockLeft = *interrupted.LockLeft
		}
		return err
	}
	if failed, ok := result.Last.(*ErrorEvent); ok {
		return &UnusableError{Message: failed.Message, ErrorEvent: failed}
	}
	// The runner's context ended and the command did not finish its stream: it was stopped
	// before it could say what it had done.
	if _, ended := result.Last.(*EndEvent); cause != nil && !ended {
		return &InterruptedError{Signal: "SIGINT", Unreported: true, Cause: cause}
	}
	if result.Exit == ExitOK {
		return nil
	}
	end, _ := result.Last.(*EndEvent)
	for _, lock := range result.Locks {
		switch lock.Outcome {
		case LockOutcomeHeld:
			if result.Run == nil || result.Run.Command == CommandRun {
				err := &LockHeldError{Holder: lock.Holder, ProcessGone: lock.ProcessGone, Remedy: lock.Remedy, Code: EndingLockHeld, Exit: result.Exit}
				if end != nil && end.Code != nil {
					err.Code, err.Remedy = *end.Code, end.Remedy
				}
				return err
			}
		case LockOutcomeFailed, LockOutcomeBroken, LockOutcomeUnreadable:
			if result.Run == nil || result.Run.Command == CommandRun {
				return &LockError{Event: lock, Exit: result.Exit}
			}
		}
	}
	for _, outcome := range result.Outcomes {
		switch o := outcome.Outcome.Value.(type) {
		case *OutcomeRefused:
			err := &RefusedError{Module: outcome.Module, Message: o.Message, Refusal: o}
			if o.Code != nil {
				err.Code = *o.Code
			}
			return err
		case *OutcomeUnusable:
			return &UnusableError{Module: outcome.Module, Message: o.Message, Unusable: o}
		case *OutcomeIncomplete, *OutcomeFailed:
			return &ModuleFailedError{Module: outcome.Module, Outcome: outcome}
		}
	}
	if result.Summary != nil && len(result.Summary.Violations) > 0 {
		err := &RuleBrokenError{Violations: result.Summary.Violations, Code: EndingRuleBroken}
		if end != nil && end.Code != nil {
			err.Code, err.Remedy = *end.Code, end.Remedy
		}
		return err
	}
	if result.Exit == ExitLockHeld {
		return &LockHeldError{Code: EndingLockHeld, Exit: result.Exit}
	}
	return &ExitError{Exit: result.Exit, Last: result.Last, Stderr: stderr}
}
