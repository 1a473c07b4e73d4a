// Command bench is the end-to-end benchmark of airlock: it drives the fake MCP
// server directly, through a bare line relay, and through airlock (on a clean
// and on a tainted session), in interleaved rounds, and compares them.
//
//	go run ./bench -airlock bin/airlock -relay bin/relay -server bin/fakeserver
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/airlock-dev/airlock/bench/policydata"
)

var (
	airlockBin = flag.String("airlock", "bin/airlock", "airlock binary")
	relayBin   = flag.String("relay", "bin/relay", "relay binary")
	serverBin  = flag.String("server", "bin/fakeserver", "fake MCP server binary")
	calls      = flag.Int("n", 2000, "timed calls per round for seq and conc8")
	warmup     = flag.Int("warmup", 100, "untimed calls before each timed run")
	bigCalls   = flag.Int("big", 20, "timed calls per round for args1m")
	notifs     = flag.Int("notify", 100000, "notifications per burst for notify")
	rounds     = flag.Int("rounds", 3, "rounds; each round runs every configuration once per workload")
	workloads  = flag.String("workloads", "seq,conc8,args1m,result16m,notify,startup", "comma-separated workloads (also: long)")
	jsonOut    = flag.String("json", "", "write all figures as JSON to this file")
	bigResults = flag.Int("result-bytes", 16<<20, "size of the text result for result16m")
	startups   = flag.Int("startups", 10, "process starts per round for startup")
	policyDir  = flag.String("policy-dir", "rego", "policy directory for the airlock-dir configuration of startup")
	longCalls  = flag.Int("long", 1000000, "calls for the long workload (memory over many calls)")
	only       = flag.String("configs", "", "comma-separated configurations to run (default: all); ratios need relay")
	profileDir = flag.String("profile", "", "write a CPU profile of every airlock process to this directory")
	dataFile   = flag.String("data", "", "policy data for airlock (default: a generated realistic file; its server must be \"bench\")")
)

var configs = []string{"direct", "relay", "airlock", "airlock-tainted"}

// configsFor lists the configurations a workload runs in. startup also
// starts airlock with its policy from a directory instead of the embedded
// bundle.
func configsFor(w string) []string {
	cs := configs
	if w == "startup" {
		cs = []string{"direct", "relay", "airlock", "airlock-dir"}
	}
	if *only == "" {
		return cs
	}
	var out []string
	for _, c := range cs {
		if slices.Contains(strings.Split(*only, ","), c) {
			out = append(out, c)
		}
	}
	return out
}

// ---- the client ----

// conn is a newline-delimited JSON-RPC client on one server process.
type conn struct {
	cmd  *exec.Cmd
	wmu  sync.Mutex
	w    *bufio.Writer
	in   io.WriteCloser
	next atomic.Int64

	mu      sync.Mutex
	pending map[int64]chan []byte
	readErr error

	// started is how long the first request (initialize) took to be
	// answered, from just before exec: the wait a client has at launch.
	started time.Duration
}

func start(config, dir string) (*conn, error) {
	var cmd *exec.Cmd
	switch config {
	case "direct":
		cmd = exec.Command(*serverBin)
	case "relay":
		cmd = exec.Command(*relayBin, "--", *serverBin)
	default:
		cmd = exec.Command(*airlockBin, "run", "-n", "bench", "--data", filepath.Join(dir, "..", "data.json"),
			"--audit", filepath.Join(dir, "audit.jsonl"), "--state-dir", dir, "--log-level", "error")
		if *profileDir != "" {
			cmd.Args = append(cmd.Args, "--cpu-profile", filepath.Join(*profileDir, config+"-"+filepath.Base(dir)+".pprof"))
		}
		if config == "airlock-dir" {
			cmd.Args = append(cmd.Args, "--policy", *policyDir)
		}
		cmd.Args = append(cmd.Args, "--", *serverBin)
		cmd.Env = append(os.Environ(), "AIRLOCK_SESSION=bench-"+filepath.Base(dir))
	}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &conn{cmd: cmd, in: in, w: bufio.NewWriterSize(in, 1<<20), pending: map[int64]chan []byte{}}
	go c.read(out)
	if _, err := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}`); err != nil {
		c.close()
		return nil, err
	}
	c.started = time.Since(t0)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true)
	return c, nil
}

// read hands every response to the call waiting for its id.
func (c *conn) read(out io.Reader) {
	r := bufio.NewReaderSize(out, 4<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			c.mu.Lock()
			c.readErr = fmt.Errorf("server output ended: %v", err)
			for _, ch := range c.pending {
				close(ch)
			}
			c.pending = map[int64]chan []byte{}
			c.mu.Unlock()
			return
		}
		var f struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &f) != nil || f.Method != "" || f.ID == nil {
			continue // a notification or a request from the server: not ours
		}
		id, _ := strconv.ParseInt(string(f.ID), 10, 64)
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- line
		}
	}
}

func (c *conn) send(frame string, flush bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.WriteString(frame)
	c.w.WriteByte('\n')
	if flush {
		return c.w.Flush()
	}
	return nil
}

// call sends a request and waits for its response; a JSON-RPC error or an
// error result fails it.
func (c *conn) call(method, params string) ([]byte, error) {
	id := c.next.Add(1)
	ch := make(chan []byte, 1)
	c.mu.Lock()
	if c.readErr != nil {
		c.mu.Unlock()
		return nil, c.readErr
	}
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params), true); err != nil {
		return nil, err
	}
	resp, ok := <-ch
	if !ok {
		return nil, c.readErr
	}
	var r struct {
		Error  json.RawMessage `json:"error"`
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp, &r); err != nil || r.Error != nil || r.Result.IsError {
		return nil, fmt.Errorf("%s: %.300s", method, resp)
	}
	return resp, nil
}

// peakRSS reads the process's VmHWM (peak resident set) in KiB.
func (c *conn) peakRSS() int64 { return c.status("VmHWM:") }

// rss reads the process's VmRSS (resident set now) in KiB.
func (c *conn) rss() int64 { return c.status("VmRSS:") }

func (c *conn) status(field string) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func (c *conn) close() error {
	c.in.Close()
	return c.cmd.Wait()
}

// ---- workloads ----

const echoArgs = `{"name":"echo","arguments":{"message":"hello https://github.com/x"}}`

// A run is one timed workload on one connection: latencies of the timed
// operations, how many operations, and the wall time they took.
type run struct {
	lat  []time.Duration
	ops  int
	wall time.Duration
	rss  []int64 // long: VmRSS in KiB after each tenth of the calls
}

func timedCalls(c *conn, params string, n, workers int) (run, error) {
	var (
		mu   sync.Mutex
		lat  = make([]time.Duration, 0, n)
		errs = make(chan error, workers)
		wg   sync.WaitGroup
	)
	t0 := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				s := time.Now()
				if _, err := c.call("tools/call", params); err != nil {
					errs <- err
					return
				}
				d := time.Since(s)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r := run{lat: lat, ops: len(lat), wall: time.Since(t0)}
	select {
	case err := <-errs:
		return r, err
	default:
		return r, nil
	}
}

func warm(c *conn, params string, n int) error {
	for range n {
		if _, err := c.call("tools/call", params); err != nil {
			return err
		}
	}
	return nil
}

var bigParams = func() string {
	msg := strings.Repeat("the quick brown fox jumps over the lazy dog ", (1<<20)/44+1)[:1<<20]
	return `{"name":"echo","arguments":{"message":"` + msg + `"}}`
}()

func workload(name string, c *conn) (run, error) {
	switch name {
	case "seq":
		if err := warm(c, echoArgs, *warmup); err != nil {
			return run{}, err
		}
		return timedCalls(c, echoArgs, *calls, 1)
	case "conc8":
		if err := warm(c, echoArgs, *warmup); err != nil {
			return run{}, err
		}
		return timedCalls(c, echoArgs, *calls, 8)
	case "args1m":
		if err := warm(c, bigParams, min(*warmup, 2)); err != nil {
			return run{}, err
		}
		return timedCalls(c, bigParams, *bigCalls, 1)
	case "result16m":
		if err := warm(c, echoArgs, min(*warmup, 2)); err != nil { // the policy is loaded
			return run{}, err
		}
		params := fmt.Sprintf(`{"name":"big","arguments":{"bytes":%d}}`, *bigResults)
		return timedCalls(c, params, max(*bigCalls/4, 1), 1)
	case "long":
		// Memory over many calls: 8 callers, VmRSS sampled after every
		// tenth. Flat means no growth in the request table, the session
		// or any cache.
		if err := warm(c, echoArgs, *warmup); err != nil {
			return run{}, err
		}
		var r run
		t0 := time.Now()
		for range 10 {
			x, err := timedCalls(c, echoArgs, *longCalls/10, 8)
			if err != nil {
				return r, err
			}
			r.lat = append(r.lat, x.lat...)
			r.ops += x.ops
			r.rss = append(r.rss, c.rss())
		}
		r.wall = time.Since(t0)
		return r, nil
	case "notify":
		if _, err := c.call("ping", "{}"); err != nil {
			return run{}, err
		}
		t0 := time.Now()
		for i := range *notifs {
			if err := c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"bench","progress":%d,"total":%d}}`, i+1, *notifs), false); err != nil {
				return run{}, err
			}
		}
		if _, err := c.call("ping", "{}"); err != nil {
			return run{}, err
		}
		wall := time.Since(t0)
		return run{ops: *notifs, wall: wall}, nil
	}
	return run{}, fmt.Errorf("unknown workload %q", name)
}

// once starts config, runs workload w on it, and stops it.
func once(config, w, tmp string, seq int) (run, int64, error) {
	if w == "startup" {
		return startup(config, tmp, seq)
	}
	dir := filepath.Join(tmp, fmt.Sprintf("run%04d", seq))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return run{}, 0, err
	}
	defer os.RemoveAll(dir)
	c, err := start(config, dir)
	if err != nil {
		return run{}, 0, fmt.Errorf("%s: start: %w", config, err)
	}
	if config == "airlock-tainted" {
		// fetch is untrusted: its result taints the session.
		if _, err := c.call("tools/call", `{"name":"fetch","arguments":{"url":"https://github.com/x"}}`); err != nil {
			c.close()
			return run{}, 0, fmt.Errorf("%s: taint: %w", config, err)
		}
	}
	r, err := workload(w, c)
	rss := c.peakRSS()
	if cerr := c.close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return r, rss, fmt.Errorf("%s/%s: %w", config, w, err)
	}
	return r, rss, nil
}

// startup starts config -startups times; each latency is exec to the
// answer to initialize, the first frame every client waits for.
func startup(config, tmp string, seq int) (run, int64, error) {
	var r run
	var rss int64
	for i := range *startups {
		dir := filepath.Join(tmp, fmt.Sprintf("run%04d-%d", seq, i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return r, 0, err
		}
		c, err := start(config, dir)
		if err != nil {
			return r, 0, fmt.Errorf("%s: start: %w", config, err)
		}
		r.lat = append(r.lat, c.started)
		r.ops++
		r.wall += c.started
		rss = max(rss, c.peakRSS())
		if err := c.close(); err != nil {
			return r, rss, fmt.Errorf("%s/startup: %w", config, err)
		}
		os.RemoveAll(dir)
	}
	return r, rss, nil
}

// ---- results ----

// Result is the figures of one configuration on one workload, over every round.
type Result struct {
	Workload  string  `json:"workload"`
	Config    string  `json:"config"`
	Ops       int     `json:"ops"`
	P50us     float64 `json:"p50_us,omitempty"`
	P90us     float64 `json:"p90_us,omitempty"`
	P99us     float64 `json:"p99_us,omitempty"`
	Rate      float64 `json:"ops_per_s"`
	PeakRSSKB int64   `json:"peak_rss_kb"`
	RSSKB     []int64 `json:"rss_kb,omitempty"` // long: VmRSS after each tenth of the calls (last round)
	lat       []time.Duration
	wall      time.Duration
}

// Ratio compares airlock (or airlock-tainted) with the relay on one workload.
type Ratio struct {
	Workload string  `json:"workload"`
	Config   string  `json:"config"`
	P50      float64 `json:"p50,omitempty"`
	P99      float64 `json:"p99,omitempty"`
	Rate     float64 `json:"rate"`
}

func (r *Result) add(x run, rss int64) {
	r.lat = append(r.lat, x.lat...)
	r.Ops += x.ops
	r.wall += x.wall
	r.PeakRSSKB = max(r.PeakRSSKB, rss)
	if x.rss != nil {
		r.RSSKB = x.rss
	}
}

func (r *Result) finish() {
	r.Rate = float64(r.Ops) / r.wall.Seconds()
	if len(r.lat) == 0 {
		return
	}
	slices.Sort(r.lat)
	q := func(p float64) float64 {
		return float64(r.lat[int(p*float64(len(r.lat)-1))].Nanoseconds()) / 1e3
	}
	r.P50us, r.P90us, r.P99us = q(0.50), q(0.90), q(0.99)
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func main() {
	flag.Parse()
	ws := strings.Split(*workloads, ",")
	tmp, err := os.MkdirTemp("", "airlock-bench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	data := policydata.Realistic("bench")
	if *dataFile != "" {
		if data, err = os.ReadFile(*dataFile); err != nil {
			fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "data.json"), data, 0o600); err != nil {
		fatal(err)
	}

	results := map[string]*Result{}
	seq := 0
	for round := range *rounds {
		for _, w := range ws {
			// Rotate the order each round so no configuration always goes first.
			cs := configsFor(w)
			for i := range cs {
				config := cs[(i+round)%len(cs)]
				seq++
				x, rss, err := once(config, w, tmp, seq)
				if err != nil {
					os.RemoveAll(tmp)
					fatal(err)
				}
				key := w + "/" + config
				if results[key] == nil {
					results[key] = &Result{Workload: w, Config: config}
				}
				results[key].add(x, rss)
			}
		}
		fmt.Fprintf(os.Stderr, "round %d of %d done\n", round+1, *rounds)
	}

	var all []*Result
	var ratios []Ratio
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tconfig\tops\tp50 µs\tp90 µs\tp99 µs\tops/s\tpeak RSS MiB\t")
	for _, w := range ws {
		for _, config := range configsFor(w) {
			r := results[w+"/"+config]
			r.finish()
			all = append(all, r)
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%.0f\t%.1f\t\n", w, config, r.Ops,
				us(r.P50us), us(r.P90us), us(r.P99us), r.Rate, float64(r.PeakRSSKB)/1024)
		}
	}
	tw.Flush()
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "workload\tvs relay\tp50 ×\tp99 ×\trate ×\t")
	for _, w := range ws {
		base := results[w+"/relay"]
		for _, config := range configsFor(w) {
			r := results[w+"/"+config]
			if base == nil || config == "direct" || config == "relay" {
				continue
			}
			x := Ratio{Workload: w, Config: config, P50: div(r.P50us, base.P50us), P99: div(r.P99us, base.P99us), Rate: div(r.Rate, base.Rate)}
			ratios = append(ratios, x)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f\t\n", w, config, ratio(x.P50), ratio(x.P99), x.Rate)
		}
	}
	tw.Flush()
	for _, r := range all {
		if len(r.RSSKB) > 0 {
			fmt.Printf("\n%s %s: VmRSS MiB after each tenth of %d calls:", r.Workload, r.Config, *longCalls)
			for _, kb := range r.RSSKB {
				fmt.Printf(" %.1f", float64(kb)/1024)
			}
			fmt.Println()
		}
	}

	if *jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{
			"rounds": *rounds, "n": *calls, "warmup": *warmup, "big": *bigCalls, "notify": *notifs,
			"result_bytes": *bigResults, "startups": *startups, "long": *longCalls,
			"results": all, "ratios": ratios,
		}, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fatal(err)
		}
	}
}

func us(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func ratio(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
