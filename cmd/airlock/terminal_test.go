package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// terminal runs a command on a pseudo-terminal, as a person would.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	seen strings.Builder
	done chan struct{}
}

func runOnTerminal(t *testing.T, env []string, args ...string) *terminal {
	t.Helper()
	term := &terminal{t: t, cmd: exec.Command(bins.airlock, args...), done: make(chan struct{})}
	term.cmd.Env = append(os.Environ(), env...)
	tty, err := pty.Start(term.cmd)
	require.NoError(t, err)
	term.tty = tty
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			term.mu.Lock()
			term.seen.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { tty.Close() })
	return term
}

// expect waits until the terminal has shown want.
func (term *terminal) expect(want string) {
	term.t.Helper()
	deadline := time.Now().Add(readTimeoutCLI)
	for time.Now().Before(deadline) {
		if strings.Contains(term.output(), want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	term.t.Fatalf("the terminal never showed %q; it showed:\n%s", want, term.output())
}

func (term *terminal) output() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.seen.String()
}

func (term *terminal) typeLine(s string) {
	_, err := term.tty.WriteString(s + "\n")
	require.NoError(term.t, err)
}

func (term *terminal) wait() int {
	err := term.cmd.Wait()
	<-term.done
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	require.NoError(term.t, err)
	return 0
}

// readTimeoutCLI only keeps a broken command from hanging the test run.
const readTimeoutCLI = 20 * time.Second

// TestStatusAndClearAsAPersonWould: a person looks at the session on a
// terminal, is asked for a reason, gives one; the clear is recorded.
func TestStatusAndClearAsAPersonWould(t *testing.T) {
	env := newQuarantineEnv(t, wormPolicy)
	fs := env.start("fs", "desk")
	require.Nil(t, fs.call("fetch"))
	require.Equal(t, refusedAfterTaint, fs.call("write_file"))
	stateEnv := []string{"AIRLOCK_STATE_DIR=" + env.stateDir}

	status := runOnTerminal(t, stateEnv, "status")
	status.expect("session desk")
	status.expect("TAINTED")
	status.expect("fs/fetch")
	status.expect("refused  1 call(s) since")
	status.expect(`airlock clear desk --reason "..."`)
	assert.Equal(t, 0, status.wait())

	clear := runOnTerminal(t, stateEnv, "clear", "desk", "--audit", env.audit)
	clear.expect("fs/fetch")
	clear.expect("reason: ")
	clear.typeLine("read the page: an injection, nothing was sent")
	clear.expect("Cleared by")
	assert.Equal(t, 0, clear.wait())
	assert.Nil(t, fs.call("write_file"), "cleared: outbound works again")

	audit, err := os.ReadFile(env.audit)
	require.NoError(t, err)
	var rec map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(audit)), "\n") {
		if strings.Contains(line, `"action":"clear"`) {
			require.NoError(t, json.Unmarshal([]byte(line), &rec))
		}
	}
	require.NotNil(t, rec, "the clear is in the audit trail")
	assert.Equal(t, "read the page: an injection, nothing was sent", rec["reason"])
	assert.Equal(t, "desk", rec["session"])
	assert.Contains(t, rec["by"], "uid")
	assert.Len(t, rec["cleared"], 1)

	out, err := exec.Command(bins.airlock, "audit", "verify", env.audit).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// TestClearForScripts: --json, AIRLOCK_SESSION as the default, and no
// prompt without a terminal.
func TestClearForScripts(t *testing.T) {
	env := newQuarantineEnv(t, wormPolicy)
	mail := env.start("mail", "batch")
	require.Nil(t, mail.call("read_mail"))
	run := func(extraEnv []string, args ...string) (string, int) {
		cmd := exec.Command(bins.airlock, args...)
		cmd.Env = append(append(os.Environ(), "AIRLOCK_STATE_DIR="+env.stateDir), extraEnv...)
		out, err := cmd.CombinedOutput()
		if exit, ok := err.(*exec.ExitError); ok {
			return string(out), exit.ExitCode()
		}
		require.NoError(t, err, "%s", out)
		return string(out), 0
	}

	out, code := run(nil, "clear", "batch")
	assert.Equal(t, 2, code, "no reason and no terminal: refused")
	assert.Contains(t, out, "--reason")

	out, code = run(nil, "clear", "--reason", "x")
	assert.Equal(t, 2, code, "no session named")
	assert.Contains(t, out, "which session")

	out, code = run(nil, "status", "--json")
	require.Equal(t, 0, code, out)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	require.Len(t, list, 1)
	assert.Equal(t, "batch", list[0]["id"])
	assert.Equal(t, true, list[0]["tainted"])

	out, code = run([]string{"AIRLOCK_SESSION=batch"}, "clear", "--json", "--reason", "nightly job, reviewed", "--audit", env.audit)
	require.Equal(t, 0, code, out)
	var cleared map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &cleared), out)
	assert.Equal(t, true, cleared["cleared"])
	assert.Equal(t, false, cleared["session"].(map[string]any)["tainted"])
	assert.Nil(t, mail.call("send_message"))

	out, code = run(nil, "clear", "batch", "--reason", "again")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "not tainted")
}

// TestStaleSessionsAndGC: a session whose client has exited is shown as
// stale and removed by gc; a named tainted session is kept.
func TestStaleSessionsAndGC(t *testing.T) {
	env := newQuarantineEnv(t, wormPolicy)
	named := env.start("fs", "kept")
	require.Nil(t, named.call("fetch"))

	// A client (here a shell) that starts airlock, reads untrusted content
	// and exits: its session is derived from the shell's pid and start time.
	script := `printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch","arguments":{}}}' | "$AIRLOCK" run -n fs --data "$DATA" --audit "$AUDIT" -- "$SERVER" >/dev/null`
	sh := exec.Command("sh", "-c", script)
	sh.Env = append(os.Environ(), "AIRLOCK="+bins.airlock, "DATA="+env.data, "AUDIT="+env.audit,
		"SERVER="+bins.fakeserver, "AIRLOCK_STATE_DIR="+env.stateDir)
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)

	run := func(args ...string) string {
		cmd := exec.Command(bins.airlock, args...)
		cmd.Env = append(os.Environ(), "AIRLOCK_STATE_DIR="+env.stateDir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	status := run("status")
	assert.Contains(t, status, fmt.Sprintf("session client-%d-", sh.Process.Pid))
	assert.Contains(t, status, "client gone (stale")
	assert.Contains(t, status, "session kept")

	gc := run("gc")
	assert.Contains(t, gc, fmt.Sprintf("removed client-%d-", sh.Process.Pid))
	assert.Contains(t, gc, "1 stale session(s) removed")
	status = run("status")
	assert.NotContains(t, status, "client gone")
	assert.Contains(t, status, "session kept", "a tainted named session stays until cleared")
	assert.Equal(t, refusedAfterTaint, named.call("write_file"))
}
