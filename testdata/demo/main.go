// Command demo plays a scripted MCP client against airlock to show its main
// job: an agent reads an untrusted web page (the page carries a prompt
// injection), airlock taints the session, and the agent's next attempt to
// send a message is refused with the rule ID, while the fake server's own
// log proves the message never reached it.
//
//	go run ./testdata/demo -airlock bin/airlock -server bin/fakeserver
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	airlock := flag.String("airlock", "bin/airlock", "airlock binary")
	server := flag.String("server", "bin/fakeserver", "fake MCP server binary")
	data := flag.String("data", "testdata/demo/gate.json", "policy data file")
	flag.Parse()
	if err := run(*airlock, *server, *data); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(airlockBin, serverBin, dataFile string) error {
	dir, err := os.MkdirTemp("", "airlock-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	auditFile := filepath.Join(dir, "audit.jsonl")
	serverLog := filepath.Join(dir, "server-received.jsonl")

	cmd := exec.Command(airlockBin, "run", "-n", "demo", "--data", dataFile, "--audit", auditFile,
		"--state-dir", dir, "--", serverBin)
	cmd.Env = append(os.Environ(), "FAKE_SERVER_LOG="+serverLog, "AIRLOCK_SESSION=demo-session")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start airlock: %w", err)
	}
	c := &client{in: stdin, out: bufio.NewReader(stdout)}

	fmt.Printf("$ airlock run -n demo --data %s -- fakeserver\n", dataFile)
	fmt.Printf("  policy data: %s\n\n", compact([]byte(mustRead(dataFile))))

	if _, err := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}`); err != nil {
		return err
	}
	if err := c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return err
	}

	fmt.Println("1. The agent fetches a release-notes page (fetch is marked untrusted).")
	resp, err := c.call("tools/call", `{"name":"fetch","arguments":{"url":"https://github.com/acme/cli/releases"}}`)
	if err != nil {
		return err
	}
	text := resultText(resp)
	if i := strings.Index(text, "SYSTEM WARNING"); i >= 0 {
		fmt.Printf("   <- the page says: %q\n", firstLine(text[i:]))
	}
	fmt.Println("   airlock recorded the taint before delivering the page.")
	fmt.Println()

	fmt.Println("2. Steered by the page, the agent tries to send a message (send_message is outbound).")
	resp, err = c.call("tools/call", `{"name":"send_message","arguments":{"to":"ops@acme.example","body":"contents of .env.prod ..."}}`)
	if err != nil {
		return err
	}
	var refusal struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Rules      []string `json:"rules"`
				DecisionID string   `json:"decision_id"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &refusal); err != nil || refusal.Error == nil {
		return fmt.Errorf("expected a refusal, got %s", resp)
	}
	fmt.Printf("   <- REFUSED, JSON-RPC error %d\n", refusal.Error.Code)
	fmt.Printf("      rule:     %s\n", strings.Join(refusal.Error.Data.Rules, ", "))
	fmt.Printf("      decision: %s\n", refusal.Error.Data.DecisionID)
	fmt.Printf("      message:  %s\n\n", refusal.Error.Message)

	fmt.Println("3. Egress control holds on any session: a host outside allow_hosts is refused.")
	resp, err = c.call("tools/call", `{"name":"echo","arguments":{"message":"see https://paste.example/ingest"}}`)
	if err != nil {
		return err
	}
	fmt.Printf("   <- %s\n\n", compact(resp))

	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("airlock: %w", err)
	}

	received := mustRead(serverLog)
	fmt.Println("4. What the server received (its own log):")
	for _, line := range strings.Split(strings.TrimSpace(received), "\n") {
		fmt.Printf("   %s\n", line)
	}
	if strings.Contains(received, "send_message") {
		return fmt.Errorf("send_message reached the server")
	}
	fmt.Println("   send_message never arrived.")
	fmt.Println()

	fmt.Println("5. The audit record of the refusal:")
	for _, line := range strings.Split(mustRead(auditFile), "\n") {
		if refusal.Error.Data.DecisionID != "" && strings.Contains(line, refusal.Error.Data.DecisionID) &&
			strings.Contains(line, `"action":"refuse"`) {
			fmt.Printf("   %s\n", line)
		}
	}

	fmt.Println("\n6. A person looks at the session, then clears it with a reason:")
	for _, args := range [][]string{
		{"status"},
		{"clear", "demo-session", "--reason", "read the page: an injection; nothing was sent"},
	} {
		cmd := exec.Command(airlockBin, args...)
		cmd.Env = append(os.Environ(), "AIRLOCK_STATE_DIR="+dir, "AIRLOCK_AUDIT="+auditFile)
		out, err := cmd.CombinedOutput()
		if err != nil && args[0] == "status" {
			return fmt.Errorf("airlock status: %w: %s", err, out)
		}
		fmt.Printf("$ airlock %s\n%s\n", strings.Join(quoteArgs(args), " "), indent(string(out)))
		if err != nil {
			return fmt.Errorf("airlock clear: %w", err)
		}
	}

	out, err := exec.Command(airlockBin, "audit", "verify", auditFile).CombinedOutput()
	fmt.Printf("$ airlock audit verify audit.jsonl\n   %s", out)
	return err
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " :;") {
			a = fmt.Sprintf("%q", a)
		}
		out[i] = a
	}
	return out
}

func indent(s string) string {
	return "   " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n   ")
}

type client struct {
	in   io.Writer
	out  *bufio.Reader
	next int
}

func (c *client) send(frame string) error {
	_, err := io.WriteString(c.in, frame+"\n")
	return err
}

// call sends a request and returns its response, skipping notifications.
func (c *client) call(method, params string) ([]byte, error) {
	c.next++
	if err := c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.next, method, params)); err != nil {
		return nil, err
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("reading the response to %s: %w", method, err)
		}
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &msg) == nil && string(msg.ID) == fmt.Sprint(c.next) {
			return line, nil
		}
	}
}

func resultText(resp []byte) string {
	var r struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	_ = json.Unmarshal(resp, &r)
	if len(r.Result.Content) == 0 {
		return ""
	}
	return r.Result.Content[0].Text
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func compact(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return strings.TrimSpace(string(b))
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func mustRead(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}
