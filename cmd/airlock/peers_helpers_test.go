package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real-peer tests run third-party MCP software (the reference npm
// servers, the TypeScript SDK, the MCP Inspector CLI, the Go SDK and
// mcp-go) directly and through the airlock binary, and compare. The npm
// peers are installed by testdata/peers/install.sh; without them the tests
// skip, unless AIRLOCK_REQUIRE_PEERS=1 (CI), where a missing peer fails.

// peerTimeout bounds every client call: the SDK clients have no default
// timeout, and a hung peer must fail the test, not stall the suite.
const peerTimeout = 60 * time.Second

// peerEnv is where the npm peers are installed.
type peerEnv struct {
	dir string // testdata/peers, with node_modules
}

func peersRequired() bool { return os.Getenv("AIRLOCK_REQUIRE_PEERS") == "1" }

// peerSetup finds the npm peers and node, or skips (fails under
// AIRLOCK_REQUIRE_PEERS=1).
func peerSetup(t *testing.T) *peerEnv {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...) + " (install them with testdata/peers/install.sh)"
		if peersRequired() {
			t.Fatal("AIRLOCK_REQUIRE_PEERS=1: " + msg)
		}
		t.Skip(msg)
	}
	dir := os.Getenv("AIRLOCK_PEERS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "testdata", "peers")
	}
	abs, err := filepath.Abs(dir)
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(abs, "node_modules")); err != nil {
		missing("no npm peers in %s", abs)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not on PATH")
	}
	e := &peerEnv{dir: abs}
	for _, bin := range []string{"mcp-server-everything", "mcp-server-filesystem", "mcp-server-memory", "mcp-inspector"} {
		if _, err := os.Stat(e.bin(bin)); err != nil {
			missing("peer %s not installed", bin)
		}
	}
	return e
}

func (e *peerEnv) bin(name string) string { return filepath.Join(e.dir, "node_modules", ".bin", name) }

func (e *peerEnv) everything() []string { return []string{e.bin("mcp-server-everything"), "stdio"} }

// peerGate writes a policy data file and returns its path.
func peerGate(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gate.json")
	require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	return path
}

// peerRoute is how a client reaches a server: directly, or through an
// airlock run with its name, data file, audit log and session.
type peerRoute struct {
	name    string // "direct" or "airlock"
	airlock bool
	server  string // -n
	gate    string
	audit   string
	session string
	env     []string // extra environment for the command (server and airlock)
}

func peerDirect(env ...string) peerRoute { return peerRoute{name: "direct", env: env} }

func peerThrough(t *testing.T, server, gate, session string, env ...string) peerRoute {
	return peerRoute{name: "airlock", airlock: true, server: server, gate: gate,
		audit: filepath.Join(t.TempDir(), "audit.jsonl"), session: session, env: env}
}

// argv is the command line a client starts for this route.
func (r peerRoute) argv(server []string) []string {
	if !r.airlock {
		return server
	}
	return append([]string{bins.airlock, "run", "-n", r.server, "--data", r.gate, "--audit", r.audit, "--"}, server...)
}

// environ is the environment of the started command. Both routes get the
// same variables, so a server sees the same environment either way.
func (r peerRoute) environ() []string {
	env := append(os.Environ(), r.env...)
	if r.session != "" {
		env = append(env, "AIRLOCK_SESSION="+r.session)
	}
	return env
}

// command builds the exec.Cmd; stderr goes to the test log on failure.
func (r peerRoute) command(t *testing.T, server []string) *exec.Cmd {
	argv := r.argv(server)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = r.environ()
	cmd.Stderr = &peerStderr{t: t, prefix: r.name}
	return cmd
}

// peerStderr keeps a peer's stderr and prints it if the test fails.
type peerStderr struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
	buf    strings.Builder
	once   sync.Once
}

func (s *peerStderr) Write(p []byte) (int, error) {
	s.once.Do(func() {
		s.t.Cleanup(func() {
			if s.t.Failed() {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.t.Logf("%s stderr:\n%s", s.prefix, s.buf.String())
			}
		})
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buf.Len() < 1<<20 {
		s.buf.Write(p)
	}
	return len(p), nil
}

// verifyAudit checks the route's audit chain (airlock routes only) and
// returns its records.
func (r peerRoute) verifyAudit(t *testing.T) []map[string]any {
	t.Helper()
	if !r.airlock {
		return nil
	}
	out, err := exec.Command(bins.airlock, "audit", "verify", r.audit).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "chain intact")
	raw, err := os.ReadFile(r.audit)
	require.NoError(t, err)
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		recs = append(recs, rec)
	}
	return recs
}

// peerGoConnect connects the official Go SDK client over stdio.
func peerGoConnect(t *testing.T, ctx context.Context, r peerRoute, server []string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "airlock-peer-test", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: r.command(t, server), TerminateDuration: 10 * time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err, "%s: connect", r.name)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// peerCtx is a context bounded by peerTimeout, ended with the test.
func peerCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), peerTimeout)
	t.Cleanup(cancel)
	return ctx
}

// peerJSON is v as indented JSON, for comparisons that print a readable diff.
func peerJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return string(b)
}

// peerRefusal checks that err is airlock's refusal naming rule, as the Go
// SDK client reports it.
func peerRefusal(t *testing.T, err error, rule string) {
	t.Helper()
	require.Error(t, err, "want a refusal by %s", rule)
	var wire *jsonrpc.Error
	require.True(t, errors.As(err, &wire), "want a JSON-RPC error, got %T: %v", err, err)
	assert.Equal(t, int64(-32010), wire.Code)
	assert.Contains(t, wire.Message, "("+rule+")")
	var data struct {
		Rules      []string `json:"rules"`
		DecisionID string   `json:"decision_id"`
	}
	require.NoError(t, json.Unmarshal(wire.Data, &data), "%s", wire.Data)
	assert.Equal(t, []string{rule}, data.Rules)
	assert.NotEmpty(t, data.DecisionID)
}

// peerText is the text of a result's content block i.
func peerText(t *testing.T, res *mcp.CallToolResult, i int) string {
	t.Helper()
	require.Greater(t, len(res.Content), i, "result: %s", peerJSON(t, res))
	tc, ok := res.Content[i].(*mcp.TextContent)
	require.True(t, ok, "content %d is %T, not text", i, res.Content[i])
	return tc.Text
}

var peerPagerOnce struct {
	sync.Once
	path string
	err  error
}

// peerPager builds testdata/peers/gopager (a Go SDK server whose tools/list
// is paginated) once.
func peerPager(t *testing.T) string {
	t.Helper()
	peerPagerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "airlock-peers-")
		if err != nil {
			peerPagerOnce.err = err
			return
		}
		peerPagerOnce.path = filepath.Join(dir, "gopager")
		if out, err := exec.Command("go", "build", "-o", peerPagerOnce.path, "../../testdata/peers/gopager").CombinedOutput(); err != nil {
			peerPagerOnce.err = fmt.Errorf("go build gopager: %v\n%s", err, out)
		}
	})
	require.NoError(t, peerPagerOnce.err)
	return peerPagerOnce.path
}

// run runs a node script or npm bin in the peers directory and returns
// its stdout and exit code; a non-zero exit fails the test unless allowFail.
func (e *peerEnv) run(t *testing.T, env []string, allowFail bool, argv ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*peerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = e.dir
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err, "%v\nstderr:\n%s", argv, stderr.String())
	}
	require.NoError(t, ctx.Err(), "%v timed out\nstderr:\n%s", argv, stderr.String())
	if !allowFail {
		require.Equal(t, 0, code, "%v\nstdout:\n%s\nstderr:\n%s", argv, out, stderr.String())
	}
	return string(out), code
}

// peerSessionTainted asks `airlock status --json` whether session is tainted.
func peerSessionTainted(t *testing.T, session string) bool {
	t.Helper()
	out, err := exec.Command(bins.airlock, "status", "--json").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var list []struct {
		ID      string `json:"id"`
		Tainted bool   `json:"tainted"`
	}
	require.NoError(t, json.Unmarshal(out, &list), "%s", out)
	for _, s := range list {
		if s.ID == session {
			return s.Tainted
		}
	}
	return false
}

// peerSession is a session ID unique to the test.
func peerSession(t *testing.T) string {
	return "peer-" + strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + fmt.Sprintf("-%d", time.Now().UnixNano())
}

// peerClock matches the wall-clock time server-everything writes into its
// dynamic resources ("created at 4:03:52 PM"): the one thing that differs
// between two runs of the same calls.
var peerClock = regexp.MustCompile(`created at \d{1,2}:\d{2}:\d{2}[\s\x{202f}]?[AP]M`)

// peerCanon is v as indented JSON, with server-everything's timestamps
// replaced, in text and in base64 blobs.
func peerCanon(t *testing.T, v any) string {
	t.Helper()
	var raw []byte
	switch v := v.(type) {
	case string:
		raw = []byte(v)
	case []byte:
		raw = v
	default:
		var err error
		raw, err = json.Marshal(v)
		require.NoError(t, err)
	}
	var generic any
	require.NoError(t, json.Unmarshal(raw, &generic), "%s", raw)
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "blob" {
					if b, err := base64.StdEncoding.DecodeString(s); err == nil && peerClock.Match(b) {
						x[k] = base64.StdEncoding.EncodeToString(peerClock.ReplaceAll(b, []byte("created at TIME")))
						continue
					}
				}
				x[k] = walk(e)
			}
			return x
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
			return x
		case string:
			return peerClock.ReplaceAllString(x, "created at TIME")
		}
		return x
	}
	out, err := json.MarshalIndent(walk(generic), "", "  ")
	require.NoError(t, err)
	return string(out)
}

// peerSame fails the test unless what a client saw through airlock equals
// what it saw direct; on a difference it prints the lines around the
// first one, not two whole transcripts.
func peerSame(t *testing.T, what string, direct, through any) {
	t.Helper()
	d, a := peerCanon(t, direct), peerCanon(t, through)
	if d == a {
		return
	}
	dl, al := strings.Split(d, "\n"), strings.Split(a, "\n")
	i := 0
	for i < len(dl) && i < len(al) && dl[i] == al[i] {
		i++
	}
	excerpt := func(lines []string) string {
		lo, hi := max(0, i-8), min(len(lines), i+8)
		return strings.Join(lines[lo:hi], "\n")
	}
	t.Fatalf("%s: through airlock differs from direct at line %d\n--- direct:\n%s\n--- through airlock:\n%s", what, i+1, excerpt(dl), excerpt(al))
}
