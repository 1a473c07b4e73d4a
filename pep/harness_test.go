package pep

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/stretchr/testify/require"

	"github.com/airlock-dev/airlock/bundles"
	"github.com/airlock-dev/airlock/pep/audit"
)

// readTimeout only keeps a broken proxy from hanging the test run; no
// assertion depends on it.
const readTimeout = 20 * time.Second

// harness runs a Proxy in-process between pipes the test plays both ends of.
type harness struct {
	t       *testing.T
	proxy   *Proxy
	client  io.WriteCloser // what the client sends
	fromPEP *lineReader    // what airlock sends to the client
	server  io.WriteCloser // what the server sends
	toSrv   *lineReader    // what airlock forwards to the server
	audit   *memAudit
	session *MemorySession
	served  chan error
	// responses is how many response records responseRecords saw.
	responses int
}

// harnessSetup is what a harnessOption may change before the proxy starts.
type harnessSetup struct {
	opts      *Options
	clientOut func(io.Writer) io.Writer // wraps what airlock writes to the client
}

type harnessOption func(*harnessSetup)

func newHarness(t *testing.T, decider Decider, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{t: t, audit: &memAudit{}, session: NewMemorySession("test-session"), served: make(chan error, 1)}
	o := Options{Server: "demo", Decider: decider, Audit: h.audit, Session: h.session}
	setup := harnessSetup{opts: &o, clientOut: func(w io.Writer) io.Writer { return w }}
	for _, opt := range opts {
		opt(&setup)
	}
	p, err := New(o)
	require.NoError(t, err)
	h.proxy = p

	clientR, clientW := io.Pipe()
	pepToClientR, pepToClientW := io.Pipe()
	serverR, serverW := io.Pipe()
	pepToServerR, pepToServerW := io.Pipe()
	h.client, h.server = clientW, serverW
	h.fromPEP, h.toSrv = newLineReader(pepToClientR), newLineReader(pepToServerR)
	go func() {
		h.served <- p.Serve(context.Background(), clientR, setup.clientOut(pepToClientW), pepToServerW, serverR)
		pepToClientW.Close()
	}()
	t.Cleanup(func() {
		clientW.Close()
		serverW.Close()
		pepToServerR.Close()
		pepToClientR.Close()
	})
	return h
}

func (h *harness) clientSends(frame string) {
	h.t.Helper()
	_, err := io.WriteString(h.client, frame+"\n")
	require.NoError(h.t, err)
}

func (h *harness) serverSends(frame string) {
	h.t.Helper()
	_, err := io.WriteString(h.server, frame+"\n")
	require.NoError(h.t, err)
}

// clientGets returns the next frame airlock wrote to the client.
func (h *harness) clientGets() string {
	h.t.Helper()
	return h.fromPEP.next(h.t)
}

// serverGets returns the next frame airlock forwarded to the server.
func (h *harness) serverGets() string {
	h.t.Helper()
	return h.toSrv.next(h.t)
}

// lineReader reads lines from a pipe in the background so a test can wait
// for one with a failsafe timeout.
type lineReader struct {
	lines chan string
}

func newLineReader(r io.Reader) *lineReader {
	lr := &lineReader{lines: make(chan string, 1024)}
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				close(lr.lines)
				return
			}
			lr.lines <- line[:len(line)-1]
		}
	}()
	return lr
}

func (lr *lineReader) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-lr.lines:
		require.True(t, ok, "the stream ended")
		return line
	case <-time.After(readTimeout):
		t.Fatal("no frame arrived")
		return ""
	}
}

// memAudit keeps audit records in memory, as decoded JSON.
type memAudit struct {
	mu      sync.Mutex
	records []map[string]any
	fail    error
}

func (m *memAudit) Append(rec any) (audit.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return audit.Entry{}, m.fail
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return audit.Entry{}, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return audit.Entry{}, err
	}
	m.records = append(m.records, v)
	return audit.Entry{Seq: int64(len(m.records))}, nil
}

func (m *memAudit) all() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any(nil), m.records...)
}

// funcDecider decides with a function, for tests of how decisions are applied.
type funcDecider func(*Input) (*Decision, error)

func (f funcDecider) Decide(_ context.Context, in *Input) (*Decision, error) { return f(in) }
func (funcDecider) Revision() string                                         { return "test" }

func allowAll(*Input) (*Decision, error) { return &Decision{Allow: true, Mode: "enforce"}, nil }

// testData is policy data in mcp-gate's format for the default bundle.
const testData = `{
  "allow_hosts": ["github.com", "*.githubusercontent.com"],
  "servers": {"demo": {"untrusted": ["fetch"], "outbound": ["send_message"]}}
}`

// defaultEngine compiles the embedded default bundle with data.
func defaultEngine(t testing.TB, data string) *Engine {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.json")
	require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	b, err := bundles.Load(context.Background(), "", path)
	require.NoError(t, err)
	e, err := NewEngine(context.Background(), b)
	require.NoError(t, err)
	return e
}

// rpcError decodes the error member of a response frame.
type rpcError struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Rules      []string `json:"rules"`
			DecisionID string   `json:"decision_id"`
		} `json:"data"`
	} `json:"error"`
}

func decodeError(t *testing.T, frame string) rpcError {
	t.Helper()
	var e rpcError
	require.NoError(t, json.Unmarshal([]byte(frame), &e), frame)
	require.NotNil(t, e.Error, "want an error response, got %s", frame)
	return e
}

var errBoom = errors.New("boom")

// engineFromModules compiles the embedded default bundle plus extra modules.
func engineFromModules(t testing.TB, modules map[string]string) *Engine {
	t.Helper()
	b, err := bundles.Load(context.Background(), "", "")
	require.NoError(t, err)
	for name, src := range modules {
		m, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{RegoVersion: ast.RegoV1})
		require.NoError(t, err)
		b.Modules = append(b.Modules, bundle.ModuleFile{Path: name, URL: name, Raw: []byte(src), Parsed: m})
	}
	e, err := NewEngine(context.Background(), b)
	require.NoError(t, err)
	return e
}

// discardAudit accepts every record and keeps none.
type discardAudit struct{}

func (discardAudit) Append(any) (audit.Entry, error) { return audit.Entry{}, nil }
