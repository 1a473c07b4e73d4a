package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigPrecedence: flags win over AIRLOCK_* variables, which win over
// the config file, which wins over defaults.
func TestConfigPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "airlock.yaml")
	require.NoError(t, os.WriteFile(file, []byte("server: from-file\naudit: /file/audit\ndata: /file/data.json\ngrace: 7s\nmax_frame_bytes: 1000\n"), 0o600))
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(*testing.T, *config)
	}{
		{"defaults", nil, nil, func(t *testing.T, c *config) {
			assert.Equal(t, "", c.Server)
			assert.Equal(t, "hash", c.AuditArguments)
			assert.Equal(t, 5*time.Second, c.Grace)
			assert.Equal(t, 64<<20, c.MaxFrameBytes)
		}},
		{"file", []string{"--config", file}, nil, func(t *testing.T, c *config) {
			assert.Equal(t, "from-file", c.Server)
			assert.Equal(t, 7*time.Second, c.Grace)
			assert.Equal(t, 1000, c.MaxFrameBytes)
		}},
		{"env over file", []string{"--config", file}, map[string]string{"AIRLOCK_SERVER": "from-env", "AIRLOCK_MAX_FRAME_BYTES": "2000"}, func(t *testing.T, c *config) {
			assert.Equal(t, "from-env", c.Server)
			assert.Equal(t, 2000, c.MaxFrameBytes)
			assert.Equal(t, "/file/audit", c.Audit)
		}},
		{"flag over env", []string{"--config", file, "-n", "from-flag", "--audit", "/flag/audit"}, map[string]string{"AIRLOCK_SERVER": "from-env"}, func(t *testing.T, c *config) {
			assert.Equal(t, "from-flag", c.Server)
			assert.Equal(t, "/flag/audit", c.Audit)
			assert.Equal(t, "/file/data.json", c.Data)
		}},
		{"config file from env", nil, map[string]string{"AIRLOCK_CONFIG": file}, func(t *testing.T, c *config) {
			assert.Equal(t, "from-file", c.Server)
		}},
		{"session and state dir from env", nil, map[string]string{"AIRLOCK_SESSION": "s-1", "AIRLOCK_STATE_DIR": "/state"}, func(t *testing.T, c *config) {
			assert.Equal(t, "s-1", c.Session)
			assert.Equal(t, "/state", c.StateDir)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			root := newRootCommand()
			run, _, err := root.Find([]string{"run"})
			require.NoError(t, err)
			require.NoError(t, run.ParseFlags(tc.args))
			c, err := loadConfig(run)
			require.NoError(t, err)
			tc.check(t, c)
		})
	}
}

// TestEvalCommand decides saved input documents like opa eval.
func TestEvalCommand(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate.json")
	require.NoError(t, os.WriteFile(gate, []byte(gatePolicy), 0o600))
	tests := []struct {
		name, input string
		want        []string
	}{
		{"tainted session, outbound tool",
			`{"version":1,"phase":"request","method":"tools/call","server":"sdk","tool":{"name":"send_message"},"arguments":{},
			  "session":{"id":"s","tainted":true,"taint":[{"server":"sdk","tool":"fetch","at":"2026-11-29T12:00:00Z","decision_id":"d1"}]},
			  "detectors":{"hosts":[]},"now":"2026-11-29T12:01:00Z"}`,
			[]string{`"allow": false`, "refused", "enforce  quarantine.outbound_after_taint", "sdk/fetch"}},
		{"clean session, allowed host",
			`{"version":1,"phase":"request","method":"tools/call","server":"sdk","tool":{"name":"fetch"},"arguments":{"url":"https://github.com"},
			  "session":{"id":"s","tainted":false,"taint":[]},
			  "detectors":{"hosts":[{"host":"github.com","raw":"https://github.com","kind":"url","path":"/url"}]},"now":"2026-11-29T12:01:00Z"}`,
			[]string{`"allow": true`, "allowed"}},
		{"untrusted result taints",
			`{"version":1,"phase":"response","method":"tools/call","server":"sdk","tool":{"name":"fetch"},"arguments":{},"result":{"content":[]},
			  "session":{"id":"s","tainted":false,"taint":[]},"detectors":{"hosts":[]},"now":"2026-11-29T12:01:00Z"}`,
			[]string{`"taint": true`, "taint    quarantine.untrusted_result"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			input := filepath.Join(dir, "input.json")
			require.NoError(t, os.WriteFile(input, []byte(tc.input), 0o600))
			out, err := exec.Command(bins.airlock, "eval", "--data", gate, "--input", input).CombinedOutput()
			require.NoError(t, err, "%s", out)
			for _, w := range tc.want {
				assert.Contains(t, string(out), w)
			}
		})
	}

	missing := exec.Command(bins.airlock, "eval", "--data", filepath.Join(dir, "missing.json"), "--input", "-")
	missing.Stdin = strings.NewReader("{}")
	out, err := missing.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "missing.json")
}

// TestAuditVerifyCommand: a changed byte is reported at its line, exit 1.
func TestAuditVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	cmd := exec.Command(bins.airlock, "run", "-n", "demo", "--audit", log, "--", bins.fakeserver)
	cmd.Stdin = strings.NewReader(strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`+"\n", 4))
	require.NoError(t, cmd.Run())

	out, err := exec.Command(bins.airlock, "audit", "verify", log).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "ok, 8 records")

	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	lines[2] = bytes.Replace(lines[2], []byte(`"allow":true`), []byte(`"allow":fals`), 1)
	require.NoError(t, os.WriteFile(log, bytes.Join(lines, nil), 0o600))
	out, err = exec.Command(bins.airlock, "audit", "verify", log).CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, 1, err.(*exec.ExitError).ExitCode())
	assert.Contains(t, string(out), "line 3")
}

// TestRunSignalForwarded: SIGTERM to airlock reaches the server, and airlock
// exits with its documented code.
func TestRunSignalForwarded(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	cmd := exec.Command(bins.airlock, "run", "--audit", "-", "--", bins.fakeserver)
	cmd.Env = append(os.Environ(), "FAKE_SERVER_EVENTS="+events)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer stdin.Close()
	_, err = io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	require.NoError(t, err)
	_, err = bufio.NewReader(stdout).ReadString('\n') // airlock is up and relaying
	require.NoError(t, err)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	require.Error(t, err)
	assert.Equal(t, 5, err.(*exec.ExitError).ExitCode())
	got, err := os.ReadFile(events)
	require.NoError(t, err)
	assert.Contains(t, string(got), "signal TERM")
}

// TestRunWithoutPolicy: a policy that does not load does not stop the
// server; decided frames are refused with the reason, the rest passes.
func TestRunWithoutPolicy(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "policy")
	require.NoError(t, os.MkdirAll(broken, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(broken, "p.rego"), []byte("package airlock\n\ndecision := {"), 0o600))
	serverLog := filepath.Join(dir, "server.log")
	cmd := exec.Command(bins.airlock, "run", "--policy", broken, "--audit", filepath.Join(dir, "a.jsonl"), "--", bins.fakeserver)
	cmd.Env = append(os.Environ(), "FAKE_SERVER_LOG="+serverLog)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}` + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	assert.Contains(t, string(out), `"id":1,"result":{}`)
	assert.Contains(t, string(out), `"code":-32011`)
	assert.Contains(t, string(out), "policy.unavailable")
	assert.Contains(t, stderr.String(), "p.rego", "the reason is logged on stderr")
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		assert.True(t, json.Valid([]byte(line)) && strings.Contains(line, `"jsonrpc":"2.0"`), "stdout carries only MCP frames, got %q", line)
	}
	got, err := os.ReadFile(serverLog)
	require.NoError(t, err)
	assert.NotContains(t, string(got), "tools/call")
}
