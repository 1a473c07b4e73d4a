package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// faultDeadline only keeps a broken airlock from hanging the test run; no
// assertion depends on it.
const faultDeadline = 30 * time.Second

// faultPolicy: fetch and read_mail are untrusted, write_file and
// send_message outbound; hosts other than github.com are refused.
const faultPolicy = `{
  "allow_hosts": ["github.com"],
  "servers": {"fs": {"untrusted": ["fetch", "read_mail"], "outbound": ["write_file", "send_message"]}}
}`

// faultEnv is a directory with a policy, an audit log and a state directory
// shared by the airlock processes of one test.
type faultEnv struct {
	t        *testing.T
	dir      string
	data     string
	audit    string
	stateDir string
	n        int // processes started, to name their files
}

func newFaultEnv(t *testing.T) *faultEnv {
	dir := t.TempDir()
	e := &faultEnv{t: t, dir: dir, data: filepath.Join(dir, "gate.json"), audit: filepath.Join(dir, "audit.jsonl"),
		stateDir: filepath.Join(dir, "state")}
	require.NoError(t, os.WriteFile(e.data, []byte(faultPolicy), 0o600))
	return e
}

// faultProc is one `airlock run` whose stdio are pipes the test holds: the
// test is the MCP client.
type faultProc struct {
	t         *testing.T
	cmd       *exec.Cmd
	in        *os.File // the client's end of airlock's stdin
	outR      *os.File // the client's end of airlock's stdout
	lines     chan string
	stderr    *faultStderr
	events    string // FAKE_SERVER_EVENTS
	serverLog string // FAKE_SERVER_LOG
	done      chan struct{}
	code      int
	closeOnce sync.Once
}

// faultOpts configure one process.
type faultOpts struct {
	session    string
	server     []string // the server command; default: the fake server with serverArgs
	serverArgs []string
	args       []string // more airlock run flags
	env        []string
}

// start runs `airlock run -n fs` for opts.session. Nothing is sent.
func (e *faultEnv) start(o faultOpts) *faultProc {
	t := e.t
	t.Helper()
	e.n++
	p := &faultProc{t: t, lines: make(chan string, 4096), done: make(chan struct{}),
		events:    filepath.Join(e.dir, fmt.Sprintf("events-%d", e.n)),
		serverLog: filepath.Join(e.dir, fmt.Sprintf("server-%d.log", e.n))}
	server := o.server
	if server == nil {
		server = append([]string{bins.fakeserver}, o.serverArgs...)
	}
	args := append([]string{"run", "-n", "fs", "--data", e.data, "--audit", e.audit}, o.args...)
	args = append(append(args, "--"), server...)
	p.cmd = exec.Command(bins.airlock, args...)
	session := o.session
	if session == "" {
		session = fmt.Sprintf("fault-%d", e.n)
	}
	p.cmd.Env = append(os.Environ(), "AIRLOCK_SESSION="+session, "AIRLOCK_STATE_DIR="+e.stateDir,
		"FAKE_SERVER_EVENTS="+p.events, "FAKE_SERVER_LOG="+p.serverLog)
	p.cmd.Env = append(p.cmd.Env, o.env...)

	// Our own pipes: the test decides when each end closes, and no copying
	// goroutine of os/exec stands between airlock and the test.
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	errR, errW, err := os.Pipe()
	require.NoError(t, err)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, errW
	require.NoError(t, p.cmd.Start())
	inR.Close()
	outW.Close()
	errW.Close()
	p.in, p.outR = inW, outR
	p.stderr = newFaultStderr(errR)
	go func() {
		br := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				p.lines <- line // a last line without '\n' is kept as it is: the test must see it
			}
			if err != nil {
				close(p.lines)
				return
			}
		}
	}()
	go func() {
		err := p.cmd.Wait()
		p.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.code = -int(ws.Signal())
			}
		}
		close(p.done)
	}()
	t.Cleanup(p.cleanup)
	return p
}

// cleanup stops what a failed test left running.
func (p *faultProc) cleanup() {
	p.closeStdin()
	select {
	case <-p.done:
	case <-time.After(faultDeadline):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	if pid, ok := faultServerPid(p.events); ok {
		_ = syscall.Kill(-pid, syscall.SIGKILL) // the server's group, if anything of it is left
	}
	p.outR.Close()
}

func (p *faultProc) send(frame string) {
	p.t.Helper()
	_, err := io.WriteString(p.in, frame+"\n")
	require.NoError(p.t, err)
}

func (p *faultProc) closeStdin() { p.closeOnce.Do(func() { p.in.Close() }) }

// callFrame is a tools/call frame.
func faultCall(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

const faultInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"faults","version":"1"}}}`

// initialize sends initialize (id 1) and the initialized notification.
func (p *faultProc) initialize() {
	p.t.Helper()
	p.send(faultInitialize)
	r := p.responseTo(1)
	require.Nil(p.t, r.Error, "initialize: %s", r.line)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// next returns the next line airlock wrote to the client; ok is false at
// the end of its output.
func (p *faultProc) next() (string, bool) {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		return line, ok
	case <-time.After(faultDeadline):
		p.t.Fatalf("airlock wrote nothing for %v; its stderr:\n%s", faultDeadline, p.stderr.text())
		return "", false
	}
}

// responseTo reads lines until the response to id, checking each line.
func (p *faultProc) responseTo(id int) faultResponse {
	p.t.Helper()
	for {
		line, ok := p.next()
		require.True(p.t, ok, "airlock's output ended before the response to id %d; stderr:\n%s", id, p.stderr.text())
		r := faultParse(p.t, line)
		if r.ID == strconv.Itoa(id) {
			return r
		}
	}
}

// rest reads every line until airlock's output ends.
func (p *faultProc) rest() []faultResponse {
	p.t.Helper()
	var out []faultResponse
	for {
		line, ok := p.next()
		if !ok {
			return out
		}
		out = append(out, faultParse(p.t, line))
	}
}

// wait returns airlock's exit code (minus the signal number if a signal
// killed it).
func (p *faultProc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(faultDeadline):
		p.t.Fatalf("airlock did not exit within %v; its stderr:\n%s", faultDeadline, p.stderr.text())
		return 0
	}
}

// faultResponse is one frame airlock wrote to the client.
type faultResponse struct {
	line   string
	ID     string // raw JSON
	Method string
	Result json.RawMessage
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Rules      []string `json:"rules"`
			Rule       string   `json:"rule"`
			DecisionID string   `json:"decision_id"`
		} `json:"data"`
	}
}

// rules are the rule IDs of an error response.
func (r faultResponse) rules() []string {
	if r.Error == nil {
		return nil
	}
	if r.Error.Data.Rule != "" {
		return []string{r.Error.Data.Rule}
	}
	return r.Error.Data.Rules
}

// faultParse checks that a line airlock wrote to the client is one whole
// JSON-RPC frame, and decodes it.
func faultParse(t *testing.T, line string) faultResponse {
	t.Helper()
	require.True(t, strings.HasSuffix(line, "\n"), "airlock wrote a line without its newline: %q", line)
	var raw struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(line), &raw), "airlock wrote a line that is not JSON: %q", line)
	require.Equal(t, "2.0", raw.JSONRPC, "not a JSON-RPC frame: %q", line)
	r := faultResponse{line: line, ID: string(raw.ID), Method: raw.Method, Result: raw.Result}
	if raw.Error != nil {
		require.NoError(t, json.Unmarshal(raw.Error, &r.Error), line)
	}
	return r
}

// faultStderr drains airlock's stderr (the server's goes there too),
// counting the fake server's flood lines and keeping the rest.
type faultStderr struct {
	mu     sync.Mutex
	bytes  int64
	flood  int
	last   string // the last flood line
	other  strings.Builder
	closed chan struct{}
}

const faultFloodPrefix = "fakeserver: stderr flood line "

func newFaultStderr(r io.ReadCloser) *faultStderr {
	s := &faultStderr{closed: make(chan struct{})}
	go func() {
		defer close(s.closed)
		defer r.Close()
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadString('\n')
			s.mu.Lock()
			s.bytes += int64(len(line))
			if strings.HasPrefix(line, faultFloodPrefix) {
				s.flood++
				s.last = line
			} else if s.other.Len() < 1<<20 {
				s.other.WriteString(line)
			}
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

// text is what was written to stderr, without flood lines.
func (s *faultStderr) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.other.String()
}

// has reports whether stderr says want, waiting for it to be written: a
// process's exit is seen before the reader has drained its last lines.
// It gives up when the pipe is closed (every writer gone) without it, or
// at the failsafe deadline.
func (s *faultStderr) has(want string) bool {
	deadline := time.After(faultDeadline)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if strings.Contains(s.text(), want) {
			return true
		}
		select {
		case <-s.closed:
			return strings.Contains(s.text(), want)
		case <-deadline:
			return false
		case <-tick.C:
		}
	}
}

// waitEOF waits until every writer of the stderr pipe (airlock, the server
// and anything the server left behind) has closed it.
func (s *faultStderr) waitEOF(t *testing.T) {
	t.Helper()
	select {
	case <-s.closed:
	case <-time.After(faultDeadline):
		t.Fatalf("airlock's stderr is still open after %v: a process holds it", faultDeadline)
	}
}

// faultServerPid reads the pid the fake server recorded in its events file.
func faultServerPid(events string) (int, bool) {
	raw, err := os.ReadFile(events)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "start pid="); ok {
			if pid, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil {
				return pid, true
			}
		}
	}
	return 0, false
}

// faultPids reads every "NAME pid=N" line of an events file.
func faultPids(t *testing.T, events string) map[string]int {
	t.Helper()
	raw, err := os.ReadFile(events)
	require.NoError(t, err)
	pids := map[string]int{}
	for _, line := range strings.Split(string(raw), "\n") {
		name, rest, ok := strings.Cut(line, " pid=")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(rest))
		require.NoError(t, err, line)
		pids[name] = pid
	}
	return pids
}

// faultStat reads a process's state, parent and process group from /proc.
// ok is false when there is no such process.
func faultStat(pid int) (state string, ppid, pgrp int, ok bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, 0, false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return "", 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return "", 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	pgrp, _ = strconv.Atoi(f[2])
	return f[0], ppid, pgrp, true
}

// faultAssertGone waits until the process pid and every process of its
// group have exited, after airlock (airlockPid) has. A zombie left to init
// is not airlock's (a grandchild, whose parent airlock reaped, or the child
// of an airlock that was SIGKILLed): on a machine whose init reaps (CI's
// systemd) it goes away; here it is logged. A zombie of airlock cannot
// remain, airlock has exited.
func faultAssertGone(t *testing.T, pid, airlockPid int) {
	t.Helper()
	deadline := time.Now().Add(faultDeadline)
	for {
		live := faultLive(pid, airlockPid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the server (pid %d, group %d) still alive: %v", pid, pid, live)
		}
		time.Sleep(10 * time.Millisecond) // polling, not a timing assertion
	}
}

// faultLive lists the processes of group pgid (and pgid itself) that are
// alive, or zombies still owned by airlock.
func faultLive(pgid, airlockPid int) []string {
	var live []string
	check := func(pid int) {
		state, ppid, pgrp, ok := faultStat(pid)
		if !ok || (pid != pgid && pgrp != pgid) {
			return
		}
		if state == "Z" && ppid != airlockPid {
			return
		}
		live = append(live, fmt.Sprintf("pid %d state %s parent %d", pid, state, ppid))
	}
	check(pgid)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid != pgid {
			check(pid)
		}
	}
	return live
}

// faultVerify runs `airlock audit verify` and returns its output; it must
// exit 0.
func faultVerify(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(bins.airlock, "audit", "verify", path).CombinedOutput()
	require.NoError(t, err, "audit verify: %s", out)
	require.Contains(t, string(out), "chain intact")
	return string(out)
}

// faultRecord is the part of an audit record the tests read.
type faultRecord struct {
	Seq        int64    `json:"seq"`
	DecisionID string   `json:"decision_id"`
	Session    string   `json:"session"`
	Direction  string   `json:"direction"`
	Phase      string   `json:"phase"`
	Method     string   `json:"method"`
	Tool       string   `json:"tool"`
	RequestID  string   `json:"request_id"`
	Action     string   `json:"action"`
	Rules      []string `json:"rules"`
	Taint      bool     `json:"taint"`
	Error      string   `json:"error"`
}

// faultRecords reads every complete record of an audit log.
func faultRecords(t *testing.T, path string) []faultRecord {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var recs []faultRecord
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if !strings.HasSuffix(line, "\n") {
			continue // a torn last line
		}
		var r faultRecord
		require.NoError(t, json.Unmarshal([]byte(line), &r), line)
		recs = append(recs, r)
	}
	return recs
}

// faultAssertComplete checks the audit records of decided calls: each of
// ids has exactly one request record; a call refused there has no other,
// a forwarded one has exactly one response record (forwarded, refused, or
// failed because the server left). responses are what the client got: each
// error that names a decision has that decision's record.
func faultAssertComplete(t *testing.T, recs []faultRecord, ids []int, responses []faultResponse) {
	t.Helper()
	byID := map[string][]faultRecord{}
	decisions := map[string]bool{}
	for _, r := range recs {
		decisions[r.DecisionID] = true
		if r.Method == "tools/call" {
			byID[r.RequestID] = append(byID[r.RequestID], r)
		}
	}
	for _, id := range ids {
		var req, resp []faultRecord
		for _, r := range byID[strconv.Itoa(id)] {
			if r.Phase == "request" {
				req = append(req, r)
			} else {
				resp = append(resp, r)
			}
		}
		require.Len(t, req, 1, "id %d: request records %+v", id, req)
		if req[0].Action == "refuse" {
			require.Empty(t, resp, "id %d was refused at the request and has response records", id)
			continue
		}
		require.Equal(t, "forward", req[0].Action, "id %d", id)
		require.Len(t, resp, 1, "id %d: forwarded, so one response record, got %+v", id, resp)
		require.Equal(t, "server_to_client", resp[0].Direction)
	}
	for _, r := range responses {
		if r.Error != nil && r.Error.Data.DecisionID != "" {
			require.True(t, decisions[r.Error.Data.DecisionID], "the refusal %s has no audit record", r.line)
		}
	}
}

// faultEvents reads the fake server's events file.
func faultEvents(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(raw)
}

// faultWaitEvent polls the events file until it holds want.
func faultWaitEvent(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(faultDeadline)
	for {
		if raw, err := os.ReadFile(path); err == nil && strings.Contains(string(raw), want) {
			return
		}
		if time.Now().After(deadline) {
			raw, _ := os.ReadFile(path)
			t.Fatalf("the server never logged %q; its events:\n%s", want, raw)
		}
		time.Sleep(5 * time.Millisecond) // polling, not a timing assertion
	}
}
