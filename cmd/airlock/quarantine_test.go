package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wormPolicy marks the reading tools of three servers untrusted and their
// writing tools outbound, as in the three routes of the OpenAI report: mail
// read then send; a fake SYSTEM WARNING read then file write/delete; a
// channel read then post and transfer.
const wormPolicy = `{
  "servers": {
    "mail":  {"untrusted": ["read_mail"],    "outbound": ["send_message"]},
    "fs":    {"untrusted": ["fetch"],        "outbound": ["write_file", "delete_file"]},
    "slack": {"untrusted": ["read_channel"], "outbound": ["post_message", "transfer"]}
  }
}`

// proxyProc is one `airlock run` process with a fake server behind it,
// driven as an MCP client would.
type proxyProc struct {
	t         *testing.T
	name      string
	cmd       *exec.Cmd
	in        io.WriteCloser
	out       *bufio.Reader
	next      int
	serverLog string
}

// quarantineEnv is a state directory and policy shared by airlock processes.
type quarantineEnv struct {
	t        *testing.T
	dir      string
	stateDir string
	data     string
	audit    string
}

func newQuarantineEnv(t *testing.T, policy string) *quarantineEnv {
	dir := t.TempDir()
	env := &quarantineEnv{t: t, dir: dir, stateDir: filepath.Join(dir, "state"),
		data: filepath.Join(dir, "gate.json"), audit: filepath.Join(dir, "audit.jsonl")}
	require.NoError(t, os.WriteFile(env.data, []byte(policy), 0o600))
	return env
}

// start runs `airlock run -n name` for session, with a fake server.
func (e *quarantineEnv) start(name, session string) *proxyProc {
	t := e.t
	t.Helper()
	p := &proxyProc{t: t, name: name, serverLog: filepath.Join(e.dir, session+"-"+name+".log")}
	p.cmd = exec.Command(bins.airlock, "run", "-n", name, "--data", e.data, "--audit", e.audit, "--", bins.fakeserver)
	p.cmd.Env = append(os.Environ(), "AIRLOCK_SESSION="+session, "AIRLOCK_STATE_DIR="+e.stateDir, "FAKE_SERVER_LOG="+p.serverLog)
	p.cmd.Stderr = os.Stderr
	var err error
	p.in, err = p.cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	p.out = bufio.NewReader(stdout)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(p.stop)
	resp := p.request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	require.Contains(t, resp, `"result"`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *proxyProc) send(frame string) {
	_, err := io.WriteString(p.in, frame+"\n")
	require.NoError(p.t, err)
}

// request sends a request and returns its response line.
func (p *proxyProc) request(method, params string) string {
	p.t.Helper()
	p.next++
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, p.next, method, params))
	want := fmt.Sprintf(`"id":%d,`, p.next)
	for {
		line, err := p.out.ReadString('\n')
		require.NoError(p.t, err, "%s: no response to %s", p.name, method)
		if strings.Contains(line, want) {
			return line
		}
		// An error without an id answers a frame airlock could not read;
		// waiting on would hang the test.
		require.NotContains(p.t, line, `"id":null`, "%s: the request was unreadable", p.name)
	}
}

// call calls a tool and returns the refusal's rule IDs (nil if it passed).
func (p *proxyProc) call(tool string) []string {
	p.t.Helper()
	resp := p.request("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{}}`, tool))
	rules := refusalRules(p.t, resp)
	if rules == nil {
		require.Contains(p.t, resp, `"result"`)
	}
	return rules
}

// received lists the tools the fake server was asked to call.
func (p *proxyProc) received() []string {
	raw, err := os.ReadFile(p.serverLog)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(p.t, err)
	var tools []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var f struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &f) == nil && f.Method == "tools/call" {
			tools = append(tools, f.Params.Name)
		}
	}
	return tools
}

func (p *proxyProc) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	p.in.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// clear runs `airlock clear` as a script would.
func (e *quarantineEnv) clear(session string) {
	e.t.Helper()
	cmd := exec.Command(bins.airlock, "clear", session, "--reason", "reviewed in the test", "--audit", e.audit)
	cmd.Env = append(os.Environ(), "AIRLOCK_STATE_DIR="+e.stateDir)
	out, err := cmd.CombinedOutput()
	require.NoError(e.t, err, "%s", out)
	require.Contains(e.t, string(out), "Cleared by")
}

var refusedAfterTaint = []string{"quarantine.outbound_after_taint"}

// TestWormRoutesAcrossProxies: a client with three airlock processes (mail,
// fs, slack) on one session. Each route of the worm is refused through
// every airlock once any of them delivered untrusted content; refused calls
// never reach their servers; reads go on; another session is unaffected;
// a restart keeps the taint; a person's clear lets calls through again.
func TestWormRoutesAcrossProxies(t *testing.T) {
	env := newQuarantineEnv(t, wormPolicy)
	procs := map[string]*proxyProc{}
	for _, name := range []string{"mail", "fs", "slack"} {
		procs[name] = env.start(name, "worm")
	}
	other := env.start("mail", "bystander")

	routes := []struct {
		name      string
		readVia   string
		read      string
		outbound  map[string][]string // server -> outbound tools that must be refused
		stillRead map[string]string   // server -> a read-only tool that still works
	}{
		{"mail read then send", "mail", "read_mail",
			map[string][]string{"mail": {"send_message"}, "slack": {"post_message"}, "fs": {"write_file"}},
			map[string]string{"mail": "echo", "fs": "echo"}},
		{"system warning then write and delete", "fs", "fetch",
			map[string][]string{"fs": {"write_file", "delete_file"}, "mail": {"send_message"}},
			map[string]string{"slack": "read_channel"}},
		{"channel read then post and transfer", "slack", "read_channel",
			map[string][]string{"slack": {"post_message", "transfer"}, "mail": {"send_message"}},
			map[string]string{"mail": "read_mail"}},
	}
	for _, route := range routes {
		t.Run(route.name, func(t *testing.T) {
			before := map[string]int{}
			for name, p := range procs {
				before[name] = len(p.received())
			}
			require.Nil(t, procs[route.readVia].call(route.read), "reading is allowed")
			for server, tools := range route.outbound {
				for _, tool := range tools {
					assert.Equal(t, refusedAfterTaint, procs[server].call(tool), "%s/%s after %s", server, tool, route.read)
				}
			}
			for server, tool := range route.stillRead {
				assert.Nil(t, procs[server].call(tool), "%s/%s still works while tainted", server, tool)
			}
			assert.Nil(t, other.call("send_message"), "another session is unaffected")

			// The servers' own logs: what arrived is the read, the reads that
			// still work, and no refused call.
			for server, tools := range route.outbound {
				got := procs[server].received()[before[server]:]
				for _, tool := range tools {
					assert.NotContains(t, got, tool, "%s reached the %s server", tool, server)
				}
			}
			env.clear("worm")
			for server, tools := range route.outbound {
				assert.Nil(t, procs[server].call(tools[0]), "%s/%s after clear", server, tools[0])
			}
		})
	}

	t.Run("restart keeps the taint", func(t *testing.T) {
		require.Nil(t, procs["slack"].call("read_channel"))
		for name, p := range procs {
			p.stop()
			procs[name] = env.start(name, "worm")
		}
		assert.Equal(t, refusedAfterTaint, procs["mail"].call("send_message"))
		assert.Equal(t, refusedAfterTaint, procs["slack"].call("post_message"))
		env.clear("worm")
		assert.Nil(t, procs["mail"].call("send_message"))
	})
}

// TestTaintRace: the untrusted result and the next outbound call, through
// another airlock process, as close together as a client can make them:
// the call is written the moment the result's line arrives. It is refused
// every time.
func TestTaintRace(t *testing.T) {
	env := newQuarantineEnv(t, wormPolicy)
	reader := env.start("fs", "race")
	sender := env.start("mail", "race")
	const rounds = 100
	for i := range rounds {
		reader.next++
		reader.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fetch","arguments":{}}}`, reader.next))
		line, err := reader.out.ReadString('\n')
		require.NoError(t, err)
		require.Contains(t, line, `"result"`)
		rules := sender.call("send_message")
		require.Equal(t, refusedAfterTaint, rules, "round %d: an outbound call after an untrusted result passed", i)
		env.clear("race") // each round starts clean
	}
	assert.NotContains(t, sender.received(), "send_message")
}
