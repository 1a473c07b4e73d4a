package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSmoke builds airlock, the relay and the fake server, runs the benchmark
// with tiny sizes, and checks that every configuration produced figures.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds airlock and runs every configuration")
	}
	dir := t.TempDir()
	bins := map[string]string{"airlock": "../cmd/airlock", "relay": "./relay", "fakeserver": "../testdata/fakeserver"}
	for name, pkg := range bins {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	out := filepath.Join(dir, "bench.json")
	cmd := exec.Command("go", "run", ".", "-airlock", filepath.Join(dir, "airlock"), "-relay", filepath.Join(dir, "relay"),
		"-server", filepath.Join(dir, "fakeserver"), "-n", "20", "-warmup", "2", "-big", "4", "-notify", "200", "-result-bytes", "100000", "-startups", "2",
		"-policy-dir", "../rego", "-rounds", "1", "-json", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bench: %v\n%s", err, b)
	} else {
		t.Logf("\n%s", b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Results []Result
		Ratios  []Ratio
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range got.Results {
		seen[r.Workload+"/"+r.Config] = true
		if r.Ops == 0 || r.Rate <= 0 || r.PeakRSSKB <= 0 {
			t.Errorf("%s/%s: no figures: %+v", r.Workload, r.Config, r)
		}
		if r.Workload != "notify" && r.P50us <= 0 {
			t.Errorf("%s/%s: no latency", r.Workload, r.Config)
		}
	}
	for _, w := range []string{"seq", "conc8", "args1m", "result16m", "notify", "startup"} {
		for _, c := range configsFor(w) {
			if !seen[w+"/"+c] {
				t.Errorf("no result for %s/%s", w, c)
			}
		}
	}
	if len(got.Ratios) != 12 { // two airlock configurations per workload
		t.Errorf("got %d ratios, want 12", len(got.Ratios))
	}
}
