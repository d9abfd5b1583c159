// Command phasethree is phase three of a Go installer, done by mesh-adopt: after genesis has
// raised the store and the bus, the catalogue's postgres, nats and mesh-vault modules adopt
// them in place. It checks first (every plan, and what the pushes will do, shown before
// anything moves), then runs, printing progress as the events come, and says what an
// operator does when it stops: who holds the lock, which module refused and why, what was
// done when it was interrupted.
//
//	go run ./example/phasethree -mesh-adopt ../../target/debug/mesh-adopt -dir ../..
//
// The genesis credentials are read from the catalogue's genesis/credentials directory here,
// as an installer holding them in memory would have them, and handed to mesh-adopt on its
// standard input: never on its command line or in its environment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"

	"meshadopt.example/meshadopt"
)

func main() {
	binary := flag.String("mesh-adopt", "mesh-adopt", "the mesh-adopt program")
	dir := flag.String("dir", ".", "the directory holding the catalogue (./catalogue)")
	source := flag.String("catalog-source", "https://git.mesh.local/catalogue.git@v3.2.0", "where a builder clones the catalogue")
	flag.Parse()

	// ^C or SIGTERM ends the context: the runner sends mesh-adopt one SIGINT and it stops
	// where it stands, letting the mesh's lock go.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	credentials, err := genesisCredentials(filepath.Join(*dir, "catalogue", "genesis", "credentials"))
	if err != nil {
		fail(err)
	}
	runner := &meshadopt.Runner{Binary: *binary, Dir: *dir, Stderr: os.Stderr}
	options := meshadopt.Options{CatalogSource: *source, Credentials: credentials}

	fmt.Println("phase three: checking postgres, nats and mesh-vault")
	options.OnEvent = showCheck
	if _, err := runner.Check(ctx, options); err != nil {
		fail(err)
	}

	fmt.Println("phase three: adopting")
	options.OnEvent = showRun
	result, err := runner.Run(ctx, options)
	if err != nil {
		fail(err)
	}
	for _, change := range result.Summary.Changes {
		fmt.Printf("  %s\n", describe(change))
	}
	fmt.Println("phase three done: the store and the bus are the mesh's modules, kept in place")
}

// genesisCredentials reads a credentials directory: one file a credential, one trailing
// newline taken off, as mesh-adopt reads one.
func genesisCredentials(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	credentials := map[string]string{}
	for _, entry := range entries {
		value, err := os.ReadFile(filepath.Join(dir, entry.Name()))
		if err != nil {
			return nil, err
		}
		credentials[entry.Name()] = strings.TrimSuffix(string(value), "\n")
	}
	return credentials, nil
}

// showCheck prints each module's plan and the predicted effect.
func showCheck(event meshadopt.Event) {
	switch e := event.(type) {
	case *meshadopt.PlanEvent:
		for _, line := range e.Summary {
			fmt.Printf("  %-10s plan: %s\n", e.Module, line)
		}
	case *meshadopt.EffectEvent:
		// Each push applies every module registered so far: its containers, as the node will.
		for _, push := range e.Pushes {
			fmt.Printf("  %-10s push:", push.Module)
			for _, container := range push.Containers {
				fmt.Printf(" %s;", describe(container.Change))
			}
			fmt.Println()
		}
	case *meshadopt.LockEvent:
		if e.Outcome == meshadopt.LockOutcomeHeld {
			fmt.Println("  note: another run holds the mesh's lock now")
		}
	}
}

// showRun prints what the plugins say, and each module's outcome as it is settled.
func showRun(event meshadopt.Event) {
	switch e := event.(type) {
	case *meshadopt.SayEvent:
		fmt.Printf("  %5.0fs %-10s %s\n", e.AtMs/1000, e.Module, printable(e.Line))
	case *meshadopt.OutcomeEvent:
		if adopted, ok := e.Outcome.Value.(*meshadopt.OutcomeAdopted); ok {
			fmt.Printf("  %-10s adopted: %s\n", e.Module, printable(adopted.Report))
		}
	}
}

// printable is a plugin's text made safe for a terminal: the stream keeps it exact, escape
// sequences included, so each control character is replaced rather than run.
func printable(text string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, text)
}

// describe is a container change in words.
func describe(change meshadopt.Change) string {
	switch c := change.Value.(type) {
	case *meshadopt.ChangeKept:
		return fmt.Sprintf("%s kept (%s)", c.Container, c.Image)
	case *meshadopt.ChangeRecreated:
		return fmt.Sprintf("%s recreated (%s → %s)", c.Container, c.From, c.To)
	case *meshadopt.ChangeCreated:
		return fmt.Sprintf("%s created (%s)", c.Container, c.Image)
	case *meshadopt.ChangeRemoved:
		return fmt.Sprintf("%s removed", c.Container)
	}
	return "?"
}

// fail says what stopped phase three and what the operator does about it, and exits as
// mesh-adopt did.
func fail(err error) {
	var (
		held        *meshadopt.LockHeldError
		refused     *meshadopt.RefusedError
		unusable    *meshadopt.UnusableError
		broken      *meshadopt.RuleBrokenError
		interrupted *meshadopt.InterruptedError
	)
	code := 1
	switch {
	case errors.As(err, &held):
		fmt.Fprintf(os.Stderr, "phase three not started: %v; retry when that run has ended\n", held)
	case errors.As(err, &refused):
		fmt.Fprintf(os.Stderr, "phase three stopped: %v\n", refused)
	case errors.As(err, &unusable):
		fmt.Fprintf(os.Stderr, "phase three not started: %v\n", unusable)
		code = 2
	case errors.As(err, &broken):
		fmt.Fprintf(os.Stderr, "phase three stopped: %v\n", broken)
	case errors.As(err, &interrupted):
		fmt.Fprintf(os.Stderr, "phase three interrupted: %v\n", interrupted)
		for _, done := range interrupted.Done {
			fmt.Fprintf(os.Stderr, "  done: %s %s %s\n", done.Module, done.Op, strings.Join(done.Args, " "))
		}
		code = 130
	default:
		fmt.Fprintf(os.Stderr, "phase three: %v\n", err)
	}
	os.Exit(code)
}
