package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bin is the sdkserver binary, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sdkserver-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "sdkserver")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building sdkserver:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type logEntry struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content block, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("want text content, got %T", res.Content[0])
	}
	return tc.Text
}

func TestSDKServer(t *testing.T) {
	// "" lets the client pick: server/discover, then stateless 2026-07-28.
	// "2025-11-25" forces the initialize handshake.
	for _, pv := range []string{"", "2025-11-25"} {
		name := pv
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			logPath := filepath.Join(t.TempDir(), "sdk.log")
			cmd := exec.Command(bin)
			cmd.Env = append(os.Environ(), "SDK_SERVER_LOG="+logPath)
			cmd.Stderr = os.Stderr

			client := mcp.NewClient(&mcp.Implementation{Name: "sdkserver-test", Version: "0.0.1"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: pv})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()

			ir := cs.InitializeResult()
			if ir == nil || ir.ServerInfo == nil || ir.ServerInfo.Name != "sdkserver" {
				t.Fatalf("initialize result: %+v", ir)
			}
			if pv != "" && ir.ProtocolVersion != pv {
				t.Errorf("protocol version %q, want %q", ir.ProtocolVersion, pv)
			}
			t.Logf("negotiated protocol version %s", ir.ProtocolVersion)

			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
				if tool.Name == "fetch" && (tool.Annotations == nil || !tool.Annotations.ReadOnlyHint) {
					t.Errorf("fetch annotations: %+v", tool.Annotations)
				}
			}
			sort.Strings(names)
			if want := []string{"echo", "fetch", "send_message"}; !reflect.DeepEqual(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}

			calls := []struct {
				tool     string
				args     map[string]any
				check    func(string) bool
				isError  bool
				recorded bool
			}{
				{"echo", map[string]any{"message": "hello ü ☃ <&>"}, func(s string) bool { return s == "hello ü ☃ <&>" }, false, true},
				{"fetch", map[string]any{"url": "https://example.org/notes"}, func(s string) bool { return strings.Contains(s, Injection) }, false, true},
				{"send_message", map[string]any{"to": "bob@partner.example", "body": "hi"}, func(s string) bool { return s == "sent" }, false, true},
				// invalid input is refused by the SDK before the handler: not recorded
				{"echo", map[string]any{}, func(s string) bool { return strings.Contains(s, "message") }, true, false},
			}
			var want []logEntry
			for _, c := range calls {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				if err != nil {
					t.Fatalf("%s: %v", c.tool, err)
				}
				if text := textOf(t, res); !c.check(text) || res.IsError != c.isError {
					t.Errorf("%s %v: text %q isError %v", c.tool, c.args, text, res.IsError)
				}
				if c.recorded {
					want = append(want, logEntry{c.tool, c.args})
				}
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}}); err == nil {
				t.Errorf("unknown tool: want a JSON-RPC error")
			}
			if err := cs.Close(); err != nil {
				t.Logf("close: %v", err)
			}

			f, err := os.Open(logPath)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var got []logEntry
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				var e logEntry
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Fatalf("SDK_SERVER_LOG line %q: %v", sc.Text(), err)
				}
				got = append(got, e)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("SDK_SERVER_LOG:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}
