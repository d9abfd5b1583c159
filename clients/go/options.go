package meshadopt

import (
	"encoding/json"
	"fmt"
	"time"
)

// Options are what a check or a run is asked to do: the modules, where the catalogue and its
// inputs are, and the mesh. Zero values leave the command's own defaults (docs/operating.md).
type Options struct {
	// Modules to check or adopt, in order; none means phase three's (postgres, nats, mesh-vault).
	Modules []string
	// Catalogue is the catalogue's directory (--catalogue).
	Catalogue string
	// Foundation is the bundle genesis produced (--foundation).
	Foundation string
	// Credentials are the genesis credentials, name to value. They reach the command as a
	// JSON object on its standard input (--credentials -), never on its command line or in
	// its environment, where a process listing shows them. Nil leaves the catalogue's
	// genesis/credentials directory.
	Credentials map[string]string
	// CredentialsDir is a directory of credentials, one file each, used when Credentials is nil.
	CredentialsDir string
	// Node is the node modules are assigned to (--node).
	Node string
	// CatalogSource is where a builder clones the catalogue, REPO[@REF] (--catalog-source).
	CatalogSource string
	// Wait is how long a plugin waits for the node after a push, in whole seconds (--wait).
	Wait time.Duration
	// Mesh is "simulated" (the default) or "live" (--mesh).
	Mesh string
	// Config is the live mesh's configuration file (--config).
	Config string
	// Record is a file the same stream is written to, for a later replay (--record).
	Record string
	// Plan is a saved plan a run applies only to the inputs it was made from (run --plan).
	Plan string
	// Out is where a check saves its plans (check --out).
	Out string
	// LockTimeout is how long a run waits for a lock another run holds (run --lock-timeout).
	LockTimeout time.Duration
	// Args are further options, as the command line takes them, for what these fields lack.
	Args []string
	// OnEvent, when set, is given every event as it is read, in order, on the goroutine
	// that called Check or Run: an installer shows progress from it.
	OnEvent func(Event)
}

// seconds writes a duration as the command reads one, in whole seconds.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%ds", int64(d/time.Second))
}

// args is the command line for command (check or run), --json first.
func (o Options) args(command string) ([]string, error) {
	args := []string{command, "--json"}
	add := func(flag, value string) {
		if value != "" {
			args = append(args, flag, value)
		}
	}
	add("--catalogue", o.Catalogue)
	add("--foundation", o.Foundation)
	if o.Credentials != nil {
		args = append(args, "--credentials", "-")
	} else {
		add("--credentials", o.CredentialsDir)
	}
	add("--node", o.Node)
	add("--catalog-source", o.CatalogSource)
	if o.Wait > 0 {
		add("--wait", seconds(o.Wait))
	}
	add("--mesh", o.Mesh)
	add("--config", o.Config)
	add("--record", o.Record)
	switch command {
	case "run":
		add("--plan", o.Plan)
		if o.LockTimeout > 0 {
			add("--lock-timeout", seconds(o.LockTimeout))
		}
		if o.Out != "" {
			return nil, fmt.Errorf("Out is for a check: a run applies a saved plan (Plan)")
		}
	case "check":
		add("--out", o.Out)
		if o.Plan != "" || o.LockTimeout > 0 {
			return nil, fmt.Errorf("Plan and LockTimeout are for a run: a check takes no lock and makes plans")
		}
	}
	args = append(args, o.Args...)
	if len(o.Modules) > 0 {
		args = append(append(args, "--"), o.Modules...)
	}
	return args, nil
}

// stdin is what the command reads on its standard input: the credentials as one JSON object,
// or nothing.
func (o Options) stdin() ([]byte, error) {
	if o.Credentials == nil {
		return nil, nil
	}
	return json.Marshal(o.Credentials)
}
