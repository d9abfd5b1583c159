package meshadopt

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets this test binary be the installer the parent-death test kills: run with
// MESHADOPT_PARENT set to a stand-in's state directory, it starts a live run there, prints
// the command's process id and then `taken` once the run holds the lock, and waits.
func TestMain(m *testing.M) {
	if state := os.Getenv("MESHADOPT_PARENT"); state != "" {
		parent(state)
		return
	}
	os.Exit(m.Run())
}

// parent is the installer the test kills outright.
func parent(state string) {
	t := &testing.T{}
	mesh := &standIn{state: state, config: state + "/mesh-adopt.toml"}
	r := runner(t, os.Getenv("MESHADOPT_PARENT_STATE"))
	r.Started = func(pid int) { fmt.Printf("pid %d\n", pid) }
	options := mesh.options(t)
	options.OnEvent = func(e Event) {
		if lock, ok := e.(*LockEvent); ok && lock.Outcome == LockOutcomeTaken {
			fmt.Println("taken")
		}
	}
	_, err := r.Run(context.Background(), options)
	fmt.Printf("ended: %v\n", err)
	os.Exit(0)
}

// An installer killed outright (SIGKILL: nothing of it runs to stop its child) leaves no run
// behind: the command is told by its parent-death signal, stops, and lets the mesh's lock go,
// so the operator's next check sees none.
func TestAParentKilledOutrightLeavesNoRunAndNoLock(t *testing.T) {
	mesh := newStandIn(t)
	mesh.slow(t, "push", 30)
	state := t.TempDir()
	installer := exec.Command(os.Args[0], "-test.run=^$")
	installer.Env = append(os.Environ(), "MESHADOPT_PARENT="+mesh.state, "MESHADOPT_PARENT_STATE="+state)
	stdout, err := installer.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	installer.Stderr = os.Stderr
	if err := installer.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	child := 0
	for lines.Scan() {
		line := lines.Text()
		if strings.HasPrefix(line, "pid ") {
			child, _ = strconv.Atoi(strings.TrimPrefix(line, "pid "))
		}
		if line == "taken" {
			break
		}
		if strings.HasPrefix(line, "ended") {
			t.Fatalf("the run ended before it was killed: %s", line)
		}
	}
	if child == 0 {
		t.Fatal("the installer never said its command's process id")
	}
	// Once the push is under way, the installer is killed outright.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(readFile(mesh.state+"/argv.log"), "push") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := installer.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = installer.Wait()
	killed := time.Now()
	for alive(child) {
		if time.Since(killed) > 20*time.Second {
			t.Fatalf("mesh-adopt (process %d) still runs %s after its parent was killed", child, time.Since(killed))
		}
		time.Sleep(50 * time.Millisecond)
	}
	assertNoLock(t, mesh, state)
}

// alive reports whether pid is a process that runs (a zombie nobody reaped does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat := readFile(fmt.Sprintf("/proc/%d/stat", pid))
	if end := strings.LastIndexByte(stat, ')'); end >= 0 && len(stat) > end+2 {
		return stat[end+2] != 'Z'
	}
	return stat != ""
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}
