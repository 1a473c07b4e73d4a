package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bin is the fakeserver binary, built once by TestMain.
var bin string

const recvTimeout = 10 * time.Second

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fakeserver-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "fakeserver")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building fakeserver:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ---- harness: the test plays the MCP client ----

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type proc struct {
	t        *testing.T
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	lines    chan []byte // complete stdout lines, without '\n'; closed at EOF
	tail     []byte      // bytes after the last '\n' at EOF (valid once lines is closed)
	stderr   *syncBuffer
	done     chan struct{} // closed when the process has exited
	exitCode int
	logPath  string // FAKE_SERVER_LOG
	evPath   string // FAKE_SERVER_EVENTS
}

func start(t *testing.T, args ...string) *proc {
	t.Helper()
	dir := t.TempDir()
	p := &proc{
		t:       t,
		lines:   make(chan []byte, 1024),
		stderr:  &syncBuffer{},
		done:    make(chan struct{}),
		logPath: filepath.Join(dir, "received.log"),
		evPath:  filepath.Join(dir, "events.log"),
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), "FAKE_SERVER_LOG="+p.logPath, "FAKE_SERVER_EVENTS="+p.evPath)
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(stdout) // no line-length limit
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				p.tail = line
				break
			}
			p.lines <- bytes.TrimSuffix(line, []byte("\n"))
		}
		close(p.lines)
		_ = p.cmd.Wait()
		p.exitCode = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// use makes helpers report to t (a subtest) until t ends.
func (p *proc) use(t *testing.T) {
	old := p.t
	p.t = t
	t.Cleanup(func() { p.t = old })
}

func (p *proc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("send: %v", err)
	}
}

// recv returns the next stdout line.
func (p *proc) recv() []byte {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("recv: stdout closed (tail %q, stderr %q)", p.tail, p.stderr.String())
		}
		return l
	case <-time.After(recvTimeout):
		p.t.Fatalf("recv: timeout")
	}
	return nil
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

func (p *proc) recvMsg() msg {
	p.t.Helper()
	line := p.recv()
	var m msg
	if err := json.Unmarshal(line, &m); err != nil {
		p.t.Fatalf("recv: not JSON: %q", line)
	}
	if m.JSONRPC != "2.0" {
		p.t.Fatalf("recv: jsonrpc %q in %s", m.JSONRPC, line)
	}
	return m
}

// expectNone checks that nothing arrives on stdout within d.
func (p *proc) expectNone(d time.Duration) {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if ok {
			p.t.Fatalf("unexpected line: %s", l)
		}
	case <-time.After(d):
	}
}

// closeAndWait closes stdin and returns the exit code.
func (p *proc) closeAndWait() int {
	p.t.Helper()
	_ = p.stdin.Close()
	return p.wait()
}

func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.exitCode
	case <-time.After(recvTimeout):
		p.t.Fatalf("process did not exit")
	}
	return 0
}

// rest drains the remaining stdout lines after the process closed stdout.
func (p *proc) rest() [][]byte {
	p.t.Helper()
	var out [][]byte
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return out
			}
			out = append(out, l)
		case <-time.After(recvTimeout):
			p.t.Fatalf("stdout not closed")
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

func call(id, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

func req(id, method string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, id, method)
}

// toolText decodes a tools/call result with a single text block.
func toolText(t *testing.T, m msg) (string, bool) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("error response: %+v", *m.Error)
	}
	var r callResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("result: %v: %s", err, m.Result)
	}
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("want one text block, got %s", m.Result)
	}
	return r.Content[0].Text, r.IsError
}

func wantID(t *testing.T, m msg, id string) {
	t.Helper()
	if string(m.ID) != id {
		t.Fatalf("id: got %s, want %s", m.ID, id)
	}
}

// ---- tests ----

func TestInitialize(t *testing.T) {
	p := start(t)
	cases := []struct {
		name, frame, wantVersion string
	}{
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, "2025-11-25"},
		{"empty params", `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}`, "2025-11-25"},
		{"2025-06-18", `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "2025-06-18"},
		{"2025-11-25", `{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, "2025-11-25"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p.use(t)
			p.send(c.frame)
			m := p.recvMsg()
			var r struct {
				ProtocolVersion string                     `json:"protocolVersion"`
				Capabilities    map[string]json.RawMessage `json:"capabilities"`
				ServerInfo      struct{ Name string }      `json:"serverInfo"`
			}
			if err := json.Unmarshal(m.Result, &r); err != nil || m.Error != nil {
				t.Fatalf("bad initialize response: %v %+v", err, m)
			}
			if r.ProtocolVersion != c.wantVersion {
				t.Errorf("protocolVersion %q, want %q", r.ProtocolVersion, c.wantVersion)
			}
			if _, ok := r.Capabilities["tools"]; !ok {
				t.Errorf("capabilities lack tools: %s", m.Result)
			}
			if r.ServerInfo.Name != "fakeserver" {
				t.Errorf("serverInfo.name %q", r.ServerInfo.Name)
			}
		})
	}
}

var allNames = []string{"fetch", "send_message", "write_file", "delete_file", "read_channel", "post_message", "transfer", "read_mail", "echo", "ask", "big", "slow", "notify"}

func TestToolsList(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"default", nil, allNames},
		{"all", []string{"-tools", "all"}, allNames},
		{"subset keeps list order", []string{"-tools", "echo,fetch"}, []string{"fetch", "echo"}},
		{"one", []string{"-tools", "send_message"}, []string{"send_message"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := start(t, c.args...)
			p.send(req("1", "tools/list"))
			m := p.recvMsg()
			wantID(t, m, "1")
			var r struct{ Tools []toolInfo }
			if err := json.Unmarshal(m.Result, &r); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tl := range r.Tools {
				got = append(got, tl.Name)
				if tl.InputSchema.Type != "object" || tl.Description == "" {
					t.Errorf("%s: bad schema or description: %+v", tl.Name, tl)
				}
				for _, k := range tl.InputSchema.Required {
					if _, ok := tl.InputSchema.Properties[k]; !ok {
						t.Errorf("%s: required %q not in properties", tl.Name, k)
					}
				}
				if tl.Annotations.ReadOnlyHint == nil || tl.Annotations.OpenWorldHint == nil {
					t.Errorf("%s: annotations lack readOnlyHint/openWorldHint", tl.Name)
				}
				if tl.Name == "fetch" && (!*tl.Annotations.ReadOnlyHint || !*tl.Annotations.OpenWorldHint) {
					t.Errorf("fetch annotations: %+v", tl.Annotations)
				}
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("tools %v, want %v", got, c.want)
			}
		})
	}
	t.Run("unknown tool in -tools", func(t *testing.T) {
		p := start(t, "-tools", "echo,bogus")
		if code := p.wait(); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
}

func TestToolCalls(t *testing.T) {
	p := start(t)
	cases := []struct {
		tool, args string
		want       string // exact text, unless contains is set
		contains   []string
		isError    bool
	}{
		{tool: "fetch", args: `{"url":"https://example.org/notes"}`, contains: []string{"Release notes", "https://example.org/notes", Injection}},
		{tool: "send_message", args: `{"to":"bob@partner.example","body":"hi"}`, want: "sent"},
		{tool: "write_file", args: `{"path":"/tmp/x","content":"y"}`, want: "ok"},
		{tool: "delete_file", args: `{"path":"/tmp/x"}`, want: "ok"},
		{tool: "read_channel", args: `{"channel":"#general"}`, contains: []string{"#general\n", "alice:"}},
		{tool: "post_message", args: `{"channel":"general","text":"hello"}`, want: "posted to #general"},
		{tool: "transfer", args: `{"to":"acct-9","amount":12.5}`, want: "transferred 12.5 to acct-9 (confirmation TX-0001)"},
		{tool: "read_mail", args: `{"folder":"INBOX"}`, contains: []string{"Folder: INBOX", MailInjection}},
		{tool: "echo", args: `{"message":"hello ü ☃ <&> \"q\""}`, want: "hello ü ☃ <&> \"q\""},
		{tool: "echo", args: `{"message":""}`, want: ""},
		{tool: "big", args: `{"bytes":5}`, want: "xxxxx"},
		{tool: "big", args: `{"bytes":0}`, want: ""},
		{tool: "slow", args: `{"ms":1}`, want: "slept 1 ms"},
		{tool: "notify", args: `{"count":0}`, want: "sent 0 notifications"},
		// argument errors are tool results with isError, as real servers do
		{tool: "echo", args: `{}`, contains: []string{"missing required argument"}, isError: true},
		{tool: "echo", args: `null`, contains: []string{"missing required argument"}, isError: true},
		{tool: "echo", args: `{"message":5}`, contains: []string{"must be of type string"}, isError: true},
		{tool: "echo", args: `[1]`, contains: []string{"must be an object"}, isError: true},
		{tool: "big", args: `{"bytes":-1}`, contains: []string{"minimum"}, isError: true},
		{tool: "slow", args: `{"ms":"5"}`, contains: []string{"must be of type integer"}, isError: true},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%s/%d", c.tool, i), func(t *testing.T) {
			p.use(t)
			id := fmt.Sprint(100 + i)
			p.send(call(id, c.tool, c.args))
			m := p.recvMsg()
			wantID(t, m, id)
			text, isErr := toolText(t, m)
			if isErr != c.isError {
				t.Errorf("isError %v, want %v (%q)", isErr, c.isError, text)
			}
			if c.contains == nil && text != c.want {
				t.Errorf("text %q, want %q", text, c.want)
			}
			for _, s := range c.contains {
				if !strings.Contains(text, s) {
					t.Errorf("text %q lacks %q", text, s)
				}
			}
		})
	}
}

func TestErrors(t *testing.T) {
	p := start(t, "-tools", "echo,ask")
	cases := []struct {
		name, frame, id string
		code            int
	}{
		{"unknown tool", call("1", "nope", `{}`), "1", -32602},
		{"tool not offered", call("2", "fetch", `{"url":"https://x.example"}`), "2", -32602},
		{"tools/call without params", req("3", "tools/call"), "3", -32602},
		{"unknown method", req("4", "resources/list"), "4", -32601},
		{"server/discover", `{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "5", -32601},
		{"parse error", `{"jsonrpc":"2.0","id":6,`, "null", -32700},
		{"not JSON at all", `hello`, "null", -32700},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, "null", -32600},
		{"neither request nor response", `{"jsonrpc":"2.0","id":8}`, "8", -32600},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p.use(t)
			p.send(c.frame)
			m := p.recvMsg()
			wantID(t, m, c.id)
			if m.Error == nil || m.Error.Code != c.code {
				t.Fatalf("want error %d, got %+v result %s", c.code, m.Error, m.Result)
			}
		})
	}
}

func TestIDRoundTrip(t *testing.T) {
	p := start(t)
	ids := []string{`0`, `-1`, `9007199254740993`, `"a"`, `"ü-☃"`, `"\u00fc-\u2603"`, `""`, `"srv-1"`, `12345678901234567890123`}
	frames := map[string]func(id string) string{
		"ping":       func(id string) string { return req(id, "ping") },
		"tools/call": func(id string) string { return call(id, "echo", `{"message":"m"}`) },
		"error":      func(id string) string { return req(id, "no/such/method") },
		"spaced":     func(id string) string { return `{ "jsonrpc" : "2.0" , "id" : ` + id + ` , "method" : "ping" }` },
	}
	for _, kind := range []string{"ping", "tools/call", "error", "spaced"} {
		for _, id := range ids {
			t.Run(kind+"/"+id, func(t *testing.T) {
				p.use(t)
				p.send(frames[kind](id))
				line := p.recv()
				if !bytes.Contains(line, []byte(`"id":`+id+`,`)) {
					t.Fatalf("id not echoed byte for byte: %s", line)
				}
				var m msg
				if err := json.Unmarshal(line, &m); err != nil {
					t.Fatal(err)
				}
				wantID(t, m, id)
			})
		}
	}
}

func TestAskSampling(t *testing.T) {
	p := start(t)
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}}}}`)
	p.recvMsg()
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// The server asks the client while the client's call (id 7) is outstanding.
	p.send(call("7", "ask", `{"prompt":"summarise the notes"}`))
	sreq := p.recvMsg()
	if sreq.Method != "sampling/createMessage" {
		t.Fatalf("want sampling/createMessage, got %+v", sreq)
	}
	wantID(t, sreq, `"srv-1"`)
	var sp struct {
		Messages []struct {
			Role    string
			Content content
		}
		MaxTokens int
	}
	if err := json.Unmarshal(sreq.Params, &sp); err != nil || len(sp.Messages) != 1 || sp.Messages[0].Content.Text != "summarise the notes" || sp.MaxTokens <= 0 {
		t.Fatalf("sampling params: %v %s", err, sreq.Params)
	}

	// The reader is not blocked: a client request with the very same id
	// ("srv-1") is answered as a request, not taken for the sampling answer.
	p.send(req(`"srv-1"`, "ping"))
	pong := p.recvMsg()
	wantID(t, pong, `"srv-1"`)
	if string(pong.Result) != "{}" {
		t.Fatalf("ping result %s", pong.Result)
	}

	p.send(`{"jsonrpc":"2.0","id":"srv-1","result":{"role":"assistant","content":{"type":"text","text":"the sampled answer"},"model":"test-model","stopReason":"endTurn"}}`)
	res := p.recvMsg()
	wantID(t, res, "7")
	if text, isErr := toolText(t, res); text != "the sampled answer" || isErr {
		t.Fatalf("ask result %q isError %v", text, isErr)
	}

	t.Run("content array", func(t *testing.T) {
		p.use(t)
		p.send(call("8", "ask", `{"prompt":"p"}`))
		s := p.recvMsg()
		wantID(t, s, `"srv-2"`)
		p.send(`{"jsonrpc":"2.0","id":"srv-2","result":{"role":"assistant","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}],"model":"m"}}`)
		if text, _ := toolText(t, p.recvMsg()); text != "one\ntwo" {
			t.Fatalf("got %q", text)
		}
	})

	t.Run("client refuses sampling", func(t *testing.T) {
		p.use(t)
		p.send(call("9", "ask", `{"prompt":"p"}`))
		s := p.recvMsg()
		p.send(`{"jsonrpc":"2.0","id":` + string(s.ID) + `,"error":{"code":-1,"message":"User rejected sampling request"}}`)
		m := p.recvMsg()
		wantID(t, m, "9")
		if text, isErr := toolText(t, m); !isErr || !strings.Contains(text, "User rejected") {
			t.Fatalf("got %q isError %v", text, isErr)
		}
	})

	t.Run("two asks answered in reverse order", func(t *testing.T) {
		p.use(t)
		p.send(call("10", "ask", `{"prompt":"first"}`))
		p.send(call("11", "ask", `{"prompt":"second"}`))
		byPrompt := map[string]string{}
		for range 2 {
			s := p.recvMsg()
			var sp struct {
				Messages []struct{ Content content }
			}
			if err := json.Unmarshal(s.Params, &sp); err != nil || len(sp.Messages) != 1 {
				t.Fatalf("bad sampling request: %s", s.Params)
			}
			byPrompt[sp.Messages[0].Content.Text] = string(s.ID)
		}
		answer := func(prompt string) {
			p.send(`{"jsonrpc":"2.0","id":` + byPrompt[prompt] + `,"result":{"role":"assistant","content":{"type":"text","text":"answer to ` + prompt + `"},"model":"m"}}`)
		}
		answer("second")
		m := p.recvMsg()
		wantID(t, m, "11")
		if text, _ := toolText(t, m); text != "answer to second" {
			t.Fatalf("got %q", text)
		}
		answer("first")
		m = p.recvMsg()
		wantID(t, m, "10")
		if text, _ := toolText(t, m); text != "answer to first" {
			t.Fatalf("got %q", text)
		}
	})

	t.Run("stdin EOF while waiting", func(t *testing.T) {
		p.use(t)
		p.send(call("12", "ask", `{"prompt":"p"}`))
		p.recvMsg() // the sampling request, never answered
		if code := p.closeAndWait(); code != 0 {
			t.Fatalf("exit %d", code)
		}
		rest := p.rest()
		if len(rest) != 1 {
			t.Fatalf("want the ask result after EOF, got %q", rest)
		}
		var m msg
		_ = json.Unmarshal(rest[0], &m)
		wantID(t, m, "12")
		if _, isErr := toolText(t, m); !isErr {
			t.Fatalf("want isError result, got %s", rest[0])
		}
	})
}

func TestNotificationsGetNoReply(t *testing.T) {
	p := start(t)
	for _, n := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"reason":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`{"jsonrpc":"2.0","method":"some/unknown/notification","params":{}}`,
		`{"jsonrpc":"2.0","id":"srv-42","result":{}}`, // a response to nothing
		``, // blank line
	} {
		p.send(n)
	}
	p.send(req("1", "ping"))
	wantID(t, p.recvMsg(), "1") // the first thing on stdout is the ping's answer
	p.expectNone(200 * time.Millisecond)
	if code := p.closeAndWait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if ev := readFile(t, p.evPath); !strings.Contains(ev, `unmatched response id="srv-42"`) {
		t.Errorf("events: %q", ev)
	}
}

func TestServerLogHasExactlyTheReceivedLines(t *testing.T) {
	p := start(t)
	echo := call("1", "echo", `{"message":"a"}`)
	lines := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		echo,
		`not json`,
		``,
		`   {"jsonrpc":"2.0","id":2,"method":"ping"}   `,
		`{"jsonrpc":"2.0","id":"ü-☃","method":"ping","params":{"k":"\u2603 ☃"}}`,
		`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`,
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\r",
	}
	for _, l := range lines {
		p.send(l)
		if l == echo {
			// written BEFORE the response: once the response is here, the log has it
			p.recvMsg() // initialize
			p.recvMsg() // echo
			if got := readFile(t, p.logPath); !strings.HasSuffix(got, echo+"\n") {
				t.Fatalf("log does not end with the echo call: %q", got)
			}
		}
	}
	// a last line without '\n' before EOF is still logged (with '\n') and handled
	last := req("5", "ping")
	if _, err := io.WriteString(p.stdin, last); err != nil {
		t.Fatal(err)
	}
	if code := p.closeAndWait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	rest := p.rest()
	if len(rest) == 0 || !bytes.Contains(rest[len(rest)-1], []byte(`"id":5`)) {
		t.Fatalf("last line not answered: %q", rest)
	}
	want := strings.Join(append(lines, last), "\n") + "\n"
	if got := readFile(t, p.logPath); got != want {
		t.Fatalf("FAKE_SERVER_LOG:\n got %q\nwant %q", got, want)
	}
	ev := readFile(t, p.evPath)
	if !strings.HasPrefix(ev, "start pid=") || !strings.HasSuffix(ev, "exit 0 stdin EOF\n") {
		t.Errorf("events: %q", ev)
	}
}

func TestNotify(t *testing.T) {
	p := start(t)
	p.send(call("1", "notify", `{"count":3}`))
	for i := 1; i <= 3; i++ {
		m := p.recvMsg()
		if m.Method != "notifications/message" || m.ID != nil {
			t.Fatalf("want notification %d, got %+v", i, m)
		}
		var np struct{ Level, Data string }
		_ = json.Unmarshal(m.Params, &np)
		if np.Level != "info" || np.Data != fmt.Sprintf("notification %d of 3", i) {
			t.Fatalf("params %s", m.Params)
		}
	}
	m := p.recvMsg()
	wantID(t, m, "1")
	if text, _ := toolText(t, m); text != "sent 3 notifications" {
		t.Fatalf("got %q", text)
	}
}

func TestBigFrames(t *testing.T) {
	const size = 16 << 20
	p := start(t)
	t.Run("16 MiB result", func(t *testing.T) {
		p.use(t)
		p.send(call("1", "big", fmt.Sprintf(`{"bytes":%d}`, size)))
		line := p.recv()
		if len(line) <= size {
			t.Fatalf("frame is %d bytes", len(line))
		}
		var m msg
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		text, _ := toolText(t, m)
		if len(text) != size || strings.Trim(text, "x") != "" {
			t.Fatalf("text of %d bytes", len(text))
		}
	})
	t.Run("16 MiB request", func(t *testing.T) {
		p.use(t)
		big := strings.Repeat("y", size)
		p.send(call("2", "echo", `{"message":"`+big+`"}`))
		text, _ := toolText(t, p.recvMsg())
		if text != big {
			t.Fatalf("echo of %d bytes", len(text))
		}
	})
}

func TestSlowDoesNotBlockReader(t *testing.T) {
	p := start(t)
	p.send(call("1", "slow", `{"ms":300}`))
	p.send(req("2", "ping"))
	wantID(t, p.recvMsg(), "2") // the ping overtakes the slow call
	m := p.recvMsg()
	wantID(t, m, "1")
	if text, _ := toolText(t, m); text != "slept 300 ms" {
		t.Fatalf("got %q", text)
	}
}

func TestCancelledSlowIsNotAnswered(t *testing.T) {
	p := start(t)
	p.send(call(`"c-1"`, "slow", `{"ms":20000}`))
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c-1","reason":"user"}}`)
	p.send(req("2", "ping"))
	wantID(t, p.recvMsg(), "2")
	p.expectNone(300 * time.Millisecond)
	begin := time.Now()
	if code := p.closeAndWait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Fatalf("exit took %v: the cancelled call was still running", d)
	}
	if rest := p.rest(); len(rest) != 0 {
		t.Fatalf("cancelled call answered: %q", rest)
	}
}

func TestEOFLetsSlowFinish(t *testing.T) {
	p := start(t)
	p.send(call("1", "slow", `{"ms":200}`))
	if code := p.closeAndWait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	rest := p.rest()
	if len(rest) != 1 || !bytes.Contains(rest[0], []byte("slept 200 ms")) {
		t.Fatalf("got %q", rest)
	}
}

func TestFaults(t *testing.T) {
	echo := call("2", "echo", `{"message":"m"}`)

	t.Run("crash-on", func(t *testing.T) {
		p := start(t, "-crash-on", "fetch,echo")
		p.send(call("1", "send_message", `{"to":"a","body":"b"}`))
		wantID(t, p.recvMsg(), "1") // other tools are unaffected
		p.send(echo)
		if code := p.wait(); code != 3 {
			t.Fatalf("exit %d, want 3", code)
		}
		if rest := p.rest(); len(rest) != 0 || len(p.tail) != 0 {
			t.Fatalf("crash answered: %q tail %q", rest, p.tail)
		}
		if !strings.HasSuffix(readFile(t, p.logPath), echo+"\n") {
			t.Errorf("the call that crashed the server is not in FAKE_SERVER_LOG")
		}
		if ev := readFile(t, p.evPath); !strings.HasSuffix(ev, "exit 3 crash-on echo\n") {
			t.Errorf("events: %q", ev)
		}
	})

	t.Run("garbage-on", func(t *testing.T) {
		p := start(t, "-garbage-on", "echo")
		p.send(echo)
		g := p.recv()
		if string(g) != GarbageLine || json.Valid(g) {
			t.Fatalf("want garbage line, got %q", g)
		}
		m := p.recvMsg()
		wantID(t, m, "2")
		if text, _ := toolText(t, m); text != "m" {
			t.Fatalf("got %q", text)
		}
		p.send(req("3", "ping"))
		wantID(t, p.recvMsg(), "3") // no garbage before other frames
		if code := p.closeAndWait(); code != 0 {
			t.Fatalf("exit %d", code)
		}
	})

	t.Run("partial-on", func(t *testing.T) {
		p := start(t, "-partial-on", "echo")
		p.send(echo)
		if code := p.wait(); code != 4 {
			t.Fatalf("exit %d, want 4", code)
		}
		if rest := p.rest(); len(rest) != 0 {
			t.Fatalf("complete lines: %q", rest)
		}
		full := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"m"}],"isError":false}}`
		if len(p.tail) == 0 || json.Valid(p.tail) || !strings.HasPrefix(full, string(p.tail)) || len(p.tail) != len(full)/2 {
			t.Fatalf("tail %q is not the first half of %q", p.tail, full)
		}
		if ev := readFile(t, p.evPath); !strings.HasSuffix(ev, "exit 4 partial-on echo\n") {
			t.Errorf("events: %q", ev)
		}
	})

	t.Run("partial-on async tool", func(t *testing.T) {
		p := start(t, "-partial-on", "slow")
		p.send(call("1", "slow", `{"ms":10}`))
		if code := p.wait(); code != 4 {
			t.Fatalf("exit %d, want 4", code)
		}
		if !strings.HasPrefix(string(p.tail), `{"jsonrpc":"2.0","id":1,`) {
			t.Fatalf("tail %q", p.tail)
		}
	})

	t.Run("hang-on", func(t *testing.T) {
		p := start(t, "-hang-on", "echo")
		p.send(echo)
		p.expectNone(300 * time.Millisecond)
		p.send(req("3", "ping"))
		wantID(t, p.recvMsg(), "3")
		if code := p.closeAndWait(); code != 0 {
			t.Fatalf("exit %d", code)
		}
		if rest := p.rest(); len(rest) != 0 {
			t.Fatalf("hung call answered: %q", rest)
		}
		if ev := readFile(t, p.evPath); !strings.Contains(ev, "hang-on echo id=2\n") {
			t.Errorf("events: %q", ev)
		}
	})

	t.Run("stderr-flood", func(t *testing.T) {
		const n = 20000 // more than a pipe buffer holds
		p := start(t, "-stderr-flood", fmt.Sprint(n))
		p.send(req("1", "ping"))
		wantID(t, p.recvMsg(), "1")
		if code := p.closeAndWait(); code != 0 {
			t.Fatalf("exit %d", code)
		}
		lines := strings.Split(strings.TrimSuffix(p.stderr.String(), "\n"), "\n")
		if len(lines) != n || lines[n-1] != fmt.Sprintf("fakeserver: stderr flood line %d of %d", n, n) {
			t.Fatalf("stderr has %d lines, last %q", len(lines), lines[len(lines)-1])
		}
	})

	for _, c := range []struct {
		args   []string
		code   int
		stderr int
	}{
		{[]string{"-exit-at-start", "7"}, 7, 0},
		{[]string{"-exit-at-start", "0"}, 0, 0},
		{[]string{"-exit-at-start", "1", "-stderr-flood", "3"}, 1, 3},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			p := start(t, c.args...)
			if code := p.wait(); code != c.code {
				t.Fatalf("exit %d, want %d", code, c.code)
			}
			if rest := p.rest(); len(rest) != 0 || len(p.tail) != 0 {
				t.Fatalf("stdout: %q %q", rest, p.tail)
			}
			if got := strings.Count(p.stderr.String(), "\n"); got != c.stderr {
				t.Fatalf("stderr lines %d, want %d", got, c.stderr)
			}
			if ev := readFile(t, p.evPath); !strings.HasSuffix(ev, fmt.Sprintf("exit %d exit-at-start\n", c.code)) {
				t.Errorf("events: %q", ev)
			}
		})
	}

	t.Run("SIGTERM", func(t *testing.T) {
		p := start(t)
		p.send(req("1", "ping"))
		wantID(t, p.recvMsg(), "1") // running, handler installed
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(); code != 143 {
			t.Fatalf("exit %d, want 143", code)
		}
		ev := readFile(t, p.evPath)
		if !strings.Contains(ev, "\nsignal TERM\n") || !strings.HasSuffix(ev, "exit 143 signal TERM\n") {
			t.Fatalf("events: %q", ev)
		}
		if log := readFile(t, p.logPath); log != req("1", "ping")+"\n" {
			t.Fatalf("FAKE_SERVER_LOG has more than received lines: %q", log)
		}
	})

	t.Run("stdin EOF", func(t *testing.T) {
		p := start(t)
		if code := p.closeAndWait(); code != 0 {
			t.Fatalf("exit %d", code)
		}
		if ev := readFile(t, p.evPath); !strings.HasSuffix(ev, "exit 0 stdin EOF\n") {
			t.Fatalf("events: %q", ev)
		}
	})
}
