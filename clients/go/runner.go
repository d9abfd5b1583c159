package meshadopt

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultGrace is how long a runner waits, after the one SIGINT it sends when its context
// ends, before it kills the command: the command stops within a second of a SIGINT (it
// stops its plugin, ends the control-plane commands it started, lets its lock go and writes
// its `interrupted` event), so this is for a command that hangs.
const DefaultGrace = 10 * time.Second

// DefaultMaxLine is the longest line a runner reads: bufio.Scanner's default, which the
// command keeps every `--json` line within, its newline included (a longer event has its
// longest texts cut, marked, and says so in its LineCut).
const DefaultMaxLine = bufio.MaxScanTokenSize

// Runner starts mesh-adopt for an installer, one command at a time or several at once.
type Runner struct {
	// Binary is the mesh-adopt program: a path (relative to this process's directory, not
	// Dir), or a name looked up in PATH; "mesh-adopt" when empty.
	Binary string
	// Dir is the directory the command runs in (where ./catalogue is found); this process's
	// when empty.
	Dir string
	// Env is added to this process's environment for the command (XDG_STATE_HOME, …).
	// Credentials never go here: Options.Credentials hands them over on stdin.
	Env []string
	// Grace is how long to wait after SIGINT before SIGKILL; DefaultGrace when zero.
	Grace time.Duration
	// MaxLine is the longest line read; DefaultMaxLine when zero.
	MaxLine int
	// Stderr, when set, is given what the command writes on its standard error, as it comes
	// (its warnings). The error a failed command returns holds its last lines either way.
	Stderr io.Writer
	// Started, when set, is called with the command's process id once it has started: the id
	// of its process group too.
	Started func(pid int)
}

// Check runs `mesh-adopt check --json`: every module's plan and the effect predicted,
// changing nothing. The error is nil when every module checked and no rule would break.
func (r *Runner) Check(ctx context.Context, opts Options) (*Result, error) {
	return r.command(ctx, "check", opts)
}

// Run runs `mesh-adopt run --json`: preflight, then each module adopted in order. The error
// is nil when every module adopted and every rule held; otherwise one of this package's
// error types (errors.As), built from the exit status and the last events.
func (r *Runner) Run(ctx context.Context, opts Options) (*Result, error) {
	return r.command(ctx, "run", opts)
}

func (r *Runner) command(ctx context.Context, command string, opts Options) (*Result, error) {
	args, err := opts.args(command)
	if err != nil {
		return nil, err
	}
	input, err := opts.stdin()
	if err != nil {
		return nil, err
	}
	binary := r.Binary
	if binary == "" {
		binary = "mesh-adopt"
	}
	// A relative path is this process's, not Dir's, as a caller reads it.
	if strings.ContainsRune(binary, filepath.Separator) && !filepath.IsAbs(binary) {
		if binary, err = filepath.Abs(binary); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), r.Env...)
	if input != nil {
		cmd.Stdin = bytes.NewReader(input)
	}
	// Its own process group, so a SIGINT reaches the command and the control-plane commands
	// it started (as a terminal's ^C would) and nothing of the installer's; and told with
	// SIGINT when the thread that started it ends, so an installer killed outright leaves
	// no run holding the mesh's lock (SIGINT lets it go; SIGKILL would leave it).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &tail{limit: 8 << 10}
	if r.Stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, r.Stderr)
	} else {
		cmd.Stderr = stderr
	}

	// The parent-death signal is sent when the *thread* that forked the child ends, and Go
	// ends a thread whose goroutine exits locked to it. So the command is started and waited
	// for on one goroutine locked to its thread for the command's whole life: no other
	// goroutine's LockOSThread can end that thread under it.
	started := make(chan error, 1)
	readDone := make(chan struct{})
	exited := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		<-readDone
		exited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	pid := cmd.Process.Pid
	if r.Started != nil {
		r.Started(pid)
	}

	stopped := make(chan struct{})
	watched := make(chan struct{})
	// The command answers SIGINT once it has taken it over, which it does before it writes
	// its first line: a SIGINT sent earlier would end it at once, saying nothing.
	heard := make(chan struct{})
	go func() {
		defer close(watched)
		r.stopOnCancel(ctx, pid, heard, stopped)
	}()

	result := &Result{}
	var once sync.Once
	onEvent := func(event Event) {
		once.Do(func() { close(heard) })
		if opts.OnEvent != nil {
			opts.OnEvent(event)
		}
	}
	readErr := r.read(stdout, result, onEvent)
	// The command may still write after a stream error: read to its end, so it is never
	// held up writing to a pipe nobody reads.
	_, _ = io.Copy(io.Discard, stdout)
	close(readDone)
	waitErr := <-exited
	close(stopped)
	<-watched

	result.Exit = exitStatus(cmd.ProcessState, waitErr)
	var cause error
	if ctx.Err() != nil {
		cause = ctx.Err()
	}
	if readErr != nil {
		var stream *StreamError
		if errors.As(readErr, &stream) {
			stream.Exit = result.Exit
		}
		return result, readErr
	}
	// A context ended too late to stop the command leaves its own ending as it was.
	return result, errorOf(result, stderr.String(), cause)
}

// stopOnCancel sends the command's process group one SIGINT when ctx ends, once the command
// has written its first line (heard is closed: it answers SIGINT from then on), then SIGKILL
// after the grace, unless the command ended first (stopped is closed).
func (r *Runner) stopOnCancel(ctx context.Context, pid int, heard, stopped <-chan struct{}) {
	select {
	case <-stopped:
		return
	case <-ctx.Done():
	}
	grace := r.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-stopped:
		return
	case <-heard:
		_ = syscall.Kill(-pid, syscall.SIGINT)
	case <-timer.C:
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return
	}
	select {
	case <-stopped:
	case <-timer.C:
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// read decodes each line of stdout, keeping it in result and giving it to onEvent. The first
// line must be a run event of this SchemaVersion, or the command's one error line.
func (r *Runner) read(stdout io.Reader, result *Result, onEvent func(Event)) error {
	max := r.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	scanner := bufio.NewScanner(stdout)
	if max != DefaultMaxLine {
		scanner.Buffer(make([]byte, 0, 64<<10), max)
	}
	number := 0
	for scanner.Scan() {
		number++
		event, err := Decode(scanner.Bytes())
		if err != nil {
			return &StreamError{Line: number, Err: err}
		}
		if number == 1 {
			if run, ok := event.(*RunEvent); ok && run.Schema != SchemaVersion {
				return &StreamError{Line: 1, Err: fmt.Errorf("the stream is in schema %d: this client reads schema %d", run.Schema, SchemaVersion)}
			}
		}
		result.keep(event)
		if onEvent != nil {
			onEvent(event)
		}
	}
	if err := scanner.Err(); err != nil {
		return &StreamError{Line: number + 1, Err: err}
	}
	return nil
}

// exitStatus is the command's exit status, -1 when a signal ended it.
func exitStatus(state *os.ProcessState, err error) int {
	if state != nil {
		return state.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// tail keeps the last bytes written to it: a failed command's last words on stderr.
type tail struct {
	limit int
	data  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.data = append(t.data, p...)
	if len(t.data) > t.limit {
		t.data = t.data[len(t.data)-t.limit:]
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.data) }
