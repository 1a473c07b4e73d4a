package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binaries built once for the end-to-end tests.
var bins struct {
	airlock, sdkserver, fakeserver string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "airlock-e2e-")
	if err != nil {
		panic(err)
	}
	// Every airlock the tests start keeps its state here, never in the
	// state directory of the person running the tests.
	if err := os.Setenv("AIRLOCK_STATE_DIR", filepath.Join(dir, "state")); err != nil {
		panic(err)
	}
	bins.airlock = filepath.Join(dir, "airlock")
	bins.sdkserver = filepath.Join(dir, "sdkserver")
	bins.fakeserver = filepath.Join(dir, "fakeserver")
	for out, pkg := range map[string]string{
		bins.airlock:    ".",
		bins.sdkserver:  "../../testdata/sdkserver",
		bins.fakeserver: "../../testdata/fakeserver",
	} {
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			panic("go build " + pkg + ": " + err.Error() + "\n" + string(b))
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const gatePolicy = `{
  "allow_hosts": ["github.com"],
  "servers": {"sdk": {"untrusted": ["fetch"], "outbound": ["send_message"]}}
}`

// TestGoSDKClientThroughAirlock drives the official Go SDK client through
// the airlock binary to a server built with the same SDK, in both protocol
// revisions, and checks from the server's own log that refused calls never
// arrived.
func TestGoSDKClientThroughAirlock(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} { // "" is the SDK's latest (2026-07-28)
		name := version
		if name == "" {
			name = "latest"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			gate := filepath.Join(dir, "gate.json")
			require.NoError(t, os.WriteFile(gate, []byte(gatePolicy), 0o600))
			serverLog := filepath.Join(dir, "server.jsonl")
			auditLog := filepath.Join(dir, "audit.jsonl")

			cmd := exec.Command(bins.airlock, "run", "-n", "sdk", "--data", gate, "--audit", auditLog, "--", bins.sdkserver)
			cmd.Env = append(os.Environ(), "SDK_SERVER_LOG="+serverLog, "AIRLOCK_SESSION=e2e-"+name)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)

			var tools []string
			for tool, err := range cs.Tools(ctx, nil) {
				require.NoError(t, err)
				tools = append(tools, tool.Name)
			}
			assert.ElementsMatch(t, []string{"echo", "fetch", "send_message"}, tools)

			// Allowed: a host on the allow-list, on a clean session.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "https://github.com/ok"}})
			require.NoError(t, err)
			assert.Equal(t, "https://github.com/ok", res.Content[0].(*mcp.TextContent).Text)

			// Refused on a clean session: egress to a host off the list.
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "see https://evil.example/x"}})
			assertRefused(t, err, "egress.host_not_allowed")

			// Untrusted content taints the session; the outbound call after it is refused.
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": "https://github.com/acme"}})
			require.NoError(t, err)
			assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "SYSTEM WARNING")
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{"to": "ops", "body": "secrets"}})
			assertRefused(t, err, "quarantine.outbound_after_taint")

			// Reading still works while tainted.
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "still here"}})
			require.NoError(t, err)
			require.NoError(t, cs.Close())

			// The server's own record: what it ran, in order; nothing refused.
			got, err := os.ReadFile(serverLog)
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(got)), "\n")
			require.Len(t, lines, 3, "server log:\n%s", got)
			assert.Contains(t, lines[0], `"tool":"echo"`)
			assert.Contains(t, lines[1], `"tool":"fetch"`)
			assert.Contains(t, lines[2], `"still here"`)
			assert.NotContains(t, string(got), "evil.example")
			assert.NotContains(t, string(got), "send_message")

			out, err := exec.Command(bins.airlock, "audit", "verify", auditLog).CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), "chain intact")
		})
	}
}

// assertRefused checks that a call failed with airlock's refusal code and
// names the rule.
func assertRefused(t *testing.T, err error, rule string) {
	t.Helper()
	require.Error(t, err)
	var wire *jsonrpc.Error
	require.True(t, errors.As(err, &wire), "want a JSON-RPC error, got %T: %v", err, err)
	assert.Equal(t, int64(-32010), wire.Code)
	assert.Contains(t, wire.Message, rule)
	assert.Contains(t, string(wire.Data), `"rules":["`+rule+`"]`)
}
