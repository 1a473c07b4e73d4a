package main

// Interop check: the official go-sdk client works against fakeserver (the
// program itself stays stdlib only; only this test imports the SDK).

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestGoSDKClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logPath := t.TempDir() + "/received.log"
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "FAKE_SERVER_LOG="+logPath)
	cmd.Stderr = os.Stderr

	var sampledPrompt string
	client := mcp.NewClient(&mcp.Implementation{Name: "fakeserver-test", Version: "0.0.1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if len(req.Params.Messages) == 1 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
					sampledPrompt = tc.Text
				}
			}
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "sdk answer"}}, nil
		},
	})
	// Default options: the client probes server/discover, gets -32601 and
	// falls back to initialize 2025-11-25.
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if ir := cs.InitializeResult(); ir.ServerInfo.Name != "fakeserver" || ir.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize result: %+v", ir)
	}

	n := 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if tool.Name == "fetch" && (tool.Annotations == nil || !tool.Annotations.ReadOnlyHint || tool.Annotations.OpenWorldHint == nil || !*tool.Annotations.OpenWorldHint) {
			t.Errorf("fetch annotations: %+v", tool.Annotations)
		}
	}
	if n != len(allNames) {
		t.Errorf("%d tools, want %d", n, len(allNames))
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"echo", map[string]any{"message": "hi ☃"}, "hi ☃"},
		{"ask", map[string]any{"prompt": "what now?"}, "sdk answer"},
		{"fetch", map[string]any{"url": "https://example.org/"}, Injection},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		tc, ok := res.Content[0].(*mcp.TextContent)
		if !ok || res.IsError || !strings.Contains(tc.Text, c.want) {
			t.Errorf("%s: %+v", c.tool, res.Content[0])
		}
	}
	if sampledPrompt != "what now?" {
		t.Errorf("sampling prompt %q", sampledPrompt)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"method":"server/discover"`, `"method":"initialize"`, `"method":"notifications/initialized"`, `"name":"ask"`, `"id":"srv-1"`} {
		if !strings.Contains(string(log), s) {
			t.Errorf("FAKE_SERVER_LOG lacks %s", s)
		}
	}
}
