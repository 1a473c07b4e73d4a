package pep

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var fakeServer struct {
	once sync.Once
	path string
	err  error
}

// fakeServerBin builds testdata/fakeserver once per test run.
func fakeServerBin(t *testing.T) string {
	t.Helper()
	fakeServer.once.Do(func() {
		dir, err := os.MkdirTemp("", "airlock-pep-")
		if err != nil {
			fakeServer.err = err
			return
		}
		fakeServer.path = filepath.Join(dir, "fakeserver")
		out, err := exec.Command("go", "build", "-o", fakeServer.path, "../testdata/fakeserver").CombinedOutput()
		if err != nil {
			fakeServer.err = err
			fakeServer.path = string(out)
		}
	})
	require.NoError(t, fakeServer.err, fakeServer.path)
	return fakeServer.path
}

// stdioRun runs RunStdio in the background with pipes for the client.
type stdioRun struct {
	client  io.WriteCloser
	fromPEP *lineReader
	done    chan stdioResult
	events  string // the fake server's event log
}

type stdioResult struct {
	code int
	err  error
}

func startStdio(t *testing.T, grace time.Duration, argv ...string) *stdioRun {
	t.Helper()
	p, err := New(Options{Server: "demo", Decider: funcDecider(allowAll), Audit: &memAudit{}})
	require.NoError(t, err)
	dir := t.TempDir()
	run := &stdioRun{done: make(chan stdioResult, 1), events: filepath.Join(dir, "events")}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "FAKE_SERVER_EVENTS="+run.events)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	run.client, run.fromPEP = inW, newLineReader(outR)
	go func() {
		code, err := RunStdio(context.Background(), p, cmd, StdioOptions{Grace: grace, Stdin: inR, Stdout: outW, Stderr: io.Discard})
		outW.Close()
		run.done <- stdioResult{code, err}
	}()
	t.Cleanup(func() { inW.Close() })
	return run
}

func (r *stdioRun) send(t *testing.T, frame string) {
	t.Helper()
	_, err := io.WriteString(r.client, frame+"\n")
	require.NoError(t, err)
}

func (r *stdioRun) wait(t *testing.T) stdioResult {
	t.Helper()
	select {
	case res := <-r.done:
		return res
	case <-time.After(readTimeout):
		t.Fatal("airlock did not stop")
		return stdioResult{}
	}
}

func (r *stdioRun) eventLog(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(r.events)
	require.NoError(t, err)
	return string(b)
}

const echoCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`

// TestStdioShutdown: how the server is stopped, whichever side leaves.
func TestStdioShutdown(t *testing.T) {
	bin := fakeServerBin(t)

	t.Run("client leaves: the server gets EOF and exits", func(t *testing.T) {
		r := startStdio(t, 5*time.Second, bin)
		r.send(t, echoCall)
		assert.Contains(t, r.fromPEP.next(t), `"hi"`)
		require.NoError(t, r.client.Close())
		res := r.wait(t)
		assert.Equal(t, ExitOK, res.code, "%v", res.err)
		assert.Contains(t, r.eventLog(t), "exit 0 stdin EOF")
	})

	t.Run("server ignores EOF: SIGTERM after the grace period", func(t *testing.T) {
		r := startStdio(t, 50*time.Millisecond, bin)
		r.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"ms":600000}}}`)
		r.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		r.fromPEP.next(t) // the ping's answer: the slow call is running
		require.NoError(t, r.client.Close())
		res := r.wait(t)
		assert.Equal(t, ExitOK, res.code, "%v", res.err)
		assert.Contains(t, r.eventLog(t), "signal TERM")
	})

	t.Run("server ignores SIGTERM: SIGKILL", func(t *testing.T) {
		r := startStdio(t, 50*time.Millisecond, "sh", "-c", `trap "" TERM; exec sleep 600`)
		require.NoError(t, r.client.Close())
		res := r.wait(t)
		assert.Equal(t, ExitOK, res.code, "%v", res.err)
	})

	t.Run("server crashes mid-call: the call gets an error", func(t *testing.T) {
		r := startStdio(t, 5*time.Second, bin, "-crash-on", "echo")
		r.send(t, echoCall)
		e := decodeError(t, r.fromPEP.next(t))
		assert.Equal(t, "1", string(e.ID))
		assert.Equal(t, CodeServerUnavailable, e.Error.Code)
		res := r.wait(t)
		assert.Equal(t, ExitServerExited, res.code)
		require.Error(t, res.err)
		assert.Contains(t, res.err.Error(), "exit status 3")
	})

	t.Run("server exits at start", func(t *testing.T) {
		r := startStdio(t, 5*time.Second, bin, "-exit-at-start", "7")
		res := r.wait(t)
		assert.Equal(t, ExitServerExited, res.code)
		assert.Contains(t, res.err.Error(), "exit status 7")
	})

	t.Run("server leaves a child holding its output", func(t *testing.T) {
		r := startStdio(t, 50*time.Millisecond, "sh", "-c", `sleep 600 & exit 0`)
		res := r.wait(t)
		assert.Equal(t, ExitServerExited, res.code)
	})

	t.Run("server command does not exist", func(t *testing.T) {
		r := startStdio(t, 5*time.Second, filepath.Join(t.TempDir(), "no-such-server"))
		res := r.wait(t)
		assert.Equal(t, ExitServerStart, res.code)
		assert.True(t, strings.Contains(res.err.Error(), "no such file"), res.err.Error())
	})
}
