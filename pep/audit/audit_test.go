package audit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/airlock-dev/airlock/pep/audit"
)

// event is a typical airlock decision record (~15 fields).
type event struct {
	Time       string            `json:"time"`
	Client     string            `json:"client"`
	Server     string            `json:"server"`
	Session    string            `json:"session"`
	RequestID  int64             `json:"request_id"`
	Method     string            `json:"method"`
	Tool       string            `json:"tool"`
	Decision   string            `json:"decision"`
	Rule       string            `json:"rule"`
	Reason     string            `json:"reason"`
	ArgsSHA256 string            `json:"args_sha256"`
	Args       map[string]string `json:"args,omitempty"`
	DurationUS int64             `json:"duration_us"`
	PID        int               `json:"pid"`
	Redacted   bool              `json:"redacted"`
}

func sampleEvent(i int) event {
	return event{
		Time:       "2025-01-02T03:04:05.678901Z",
		Client:     "claude-desktop",
		Server:     "filesystem",
		Session:    "5f2b1c9e-7a41-4c3e-9d8b-0a6f2e4d1c3b",
		RequestID:  int64(i),
		Method:     "tools/call",
		Tool:       "read_file",
		Decision:   "deny",
		Rule:       "fs.deny_outside_workspace",
		Reason:     "path /etc/shadow is outside the workspace",
		ArgsSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Args:       map[string]string{"path": "/etc/shadow"},
		DurationUS: 123,
		PID:        4242,
		Redacted:   i%2 == 0,
	}
}

// buildLog writes n records to memory and returns the log.
func buildLog(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := audit.New(&buf)
	for i := range n {
		_, err := w.Append(sampleEvent(i))
		require.NoError(t, err)
	}
	return buf.Bytes()
}

// splitLines splits a log into lines, each keeping its '\n'.
func splitLines(b []byte) [][]byte {
	l := bytes.SplitAfter(b, []byte{'\n'})
	if len(l[len(l)-1]) == 0 {
		l = l[:len(l)-1]
	}
	return l
}

func joinLines(lines [][]byte) []byte { return bytes.Join(lines, nil) }

func verifyBytes(b []byte) (int, error) { return audit.Verify(bytes.NewReader(b)) }

func verifyFile(t testing.TB, path string) (int, error) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	return audit.Verify(f)
}

// rehash recomputes the hash of a line (with '\n') the way an attacker who
// knows the format would, independently of the package's code.
func rehash(line []byte) []byte {
	const suffix = len(`,"hash":"`) + 64 + len(`"}`) + 1
	body := append(append([]byte{}, line[:len(line)-suffix]...), '}')
	sum := sha256.Sum256(body)
	out := append([]byte{}, line[:len(line)-suffix]...)
	out = append(out, `,"hash":"`...)
	out = append(out, hex.EncodeToString(sum[:])...)
	return append(out, "\"}\n"...)
}

func requireVerifyErr(t *testing.T, err error, line int, kind error) {
	t.Helper()
	var ve *audit.VerifyError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, line, ve.Line, "line of %v", err)
	assert.ErrorIs(t, err, kind)
}

func TestAppendVerify(t *testing.T) {
	for _, n := range []int{0, 1, 2, 10, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var buf bytes.Buffer
			w := audit.New(&buf)
			var entries []audit.Entry
			for i := range n {
				e, err := w.Append(sampleEvent(i))
				require.NoError(t, err)
				entries = append(entries, e)
			}
			got, err := verifyBytes(buf.Bytes())
			require.NoError(t, err)
			assert.Equal(t, n, got)
			if n == 0 {
				assert.Zero(t, buf.Len())
				return
			}

			// Check the documented format independently of Verify.
			lines := splitLines(buf.Bytes())
			require.Len(t, lines, n)
			prev := ""
			for i, line := range lines {
				require.True(t, bytes.HasSuffix(line, []byte("\"}\n")))
				wantPrefix := fmt.Sprintf(`{"seq":%d,"prev":"%s",`, i+1, prev)
				require.True(t, bytes.HasPrefix(line, []byte(wantPrefix)), "line %d: %s", i+1, line)

				var m map[string]any
				require.NoError(t, json.Unmarshal(line, &m))
				assert.Equal(t, float64(i+1), m["seq"])
				assert.Equal(t, prev, m["prev"])
				assert.Equal(t, "read_file", m["tool"])
				assert.Equal(t, float64(i), m["request_id"])

				hash := m["hash"].(string)
				body := append(bytes.Clone(line[:len(line)-len(`,"hash":"`)-64-3]), '}')
				sum := sha256.Sum256(body)
				assert.Equal(t, hex.EncodeToString(sum[:]), hash)
				assert.Equal(t, audit.Entry{Seq: int64(i + 1), Hash: hash}, entries[i])
				prev = hash
			}
		})
	}
}

func TestEmptyObjectRecord(t *testing.T) {
	var buf bytes.Buffer
	w := audit.New(&buf)
	for range 3 {
		_, err := w.Append(struct{}{})
		require.NoError(t, err)
	}
	_, err := w.Append(map[string]int{})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(buf.String(), `{"seq":1,"prev":"","hash":"`), buf.String())
	n, err := verifyBytes(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, 4, n)
}

// TestTamperFlipEveryByte flips every byte of line 3 of 5 with several
// masks; every variant must fail at line 3.
func TestTamperFlipEveryByte(t *testing.T) {
	orig := buildLog(t, 5)
	lines := splitLines(orig)
	start := len(lines[0]) + len(lines[1])
	line3 := lines[2]
	hashStart := len(line3) - 1 - len(`"}`) - 64 // first hex digit of the stored hash
	suffixStart := hashStart - len(`,"hash":"`)

	// Make sure the sample positions named in the brief are really covered.
	for _, region := range []string{`{"seq":3`, `"prev":"`, `"reason":"path /etc`, `"hash":"`} {
		require.Contains(t, string(line3), region)
	}

	for _, mask := range []byte{0x01, 0x20, 0x80, 0xff} {
		t.Run(fmt.Sprintf("xor%02x", mask), func(t *testing.T) {
			for off := range line3 {
				b := bytes.Clone(orig)
				b[start+off] ^= mask
				n, err := verifyBytes(b)
				msg := fmt.Sprintf("flip %#02x at offset %d (%q)", mask, off, line3[off])
				require.Error(t, err, msg)
				assert.Equal(t, 2, n, msg)
				var ve *audit.VerifyError
				require.ErrorAs(t, err, &ve, msg)
				require.Equal(t, 3, ve.Line, msg+": "+err.Error())
				switch {
				case off < suffixStart:
					// Any change in the hashed body is a hash mismatch.
					assert.ErrorIs(t, err, audit.ErrTampered, msg)
				default:
					// In the hash member itself (or the newline): the stored
					// hash no longer matches, or the line lost its shape.
					assert.True(t, errors.Is(err, audit.ErrTampered) ||
						errors.Is(err, audit.ErrMalformed) ||
						errors.Is(err, audit.ErrNotJSON), msg+": "+err.Error())
				}
			}
		})
	}
}

func TestTamperStructural(t *testing.T) {
	orig := splitLines(buildLog(t, 5))
	edit := func(f func(l [][]byte) [][]byte) []byte {
		l := make([][]byte, len(orig))
		for i := range orig {
			l[i] = bytes.Clone(orig[i])
		}
		return joinLines(f(l))
	}
	tests := []struct {
		name     string
		log      []byte
		wantN    int
		wantLine int   // 0: no error expected
		wantErr  error // kind
	}{
		{"untouched", edit(func(l [][]byte) [][]byte { return l }), 5, 0, nil},
		{"delete line 3", edit(func(l [][]byte) [][]byte { return append(l[:2], l[3:]...) }), 2, 3, audit.ErrBrokenLink},
		{"delete line 1", edit(func(l [][]byte) [][]byte { return l[1:] }), 0, 1, audit.ErrBrokenLink},
		// A chain cannot notice that its newest records were cut off: that
		// is what anchoring Entry.Hash elsewhere is for.
		{"delete last line (undetectable)", edit(func(l [][]byte) [][]byte { return l[:4] }), 4, 0, nil},
		{"swap lines 2 and 3", edit(func(l [][]byte) [][]byte { l[1], l[2] = l[2], l[1]; return l }), 1, 2, audit.ErrBrokenLink},
		{"swap lines 4 and 5", edit(func(l [][]byte) [][]byte { l[3], l[4] = l[4], l[3]; return l }), 3, 4, audit.ErrBrokenLink},
		{"duplicate line 3", edit(func(l [][]byte) [][]byte {
			return append(l[:3:3], append([][]byte{l[2]}, l[3:]...)...)
		}), 3, 4, audit.ErrBrokenLink},
		{"append copy of line 1", edit(func(l [][]byte) [][]byte { return append(l, l[0]) }), 5, 6, audit.ErrBrokenLink},
		{"rewrite line 3 and recompute its hash", edit(func(l [][]byte) [][]byte {
			l[2] = rehash(bytes.Replace(l[2], []byte(`"deny"`), []byte(`"allow"`), 1))
			return l
		}), 3, 4, audit.ErrBrokenLink},
		{"renumber line 3 and recompute its hash", edit(func(l [][]byte) [][]byte {
			l[2] = rehash(bytes.Replace(l[2], []byte(`{"seq":3,`), []byte(`{"seq":7,`), 1))
			return l
		}), 2, 3, audit.ErrBrokenLink},
		{"blank line inserted", edit(func(l [][]byte) [][]byte {
			return append(l[:2:2], append([][]byte{[]byte("\n")}, l[2:]...)...)
		}), 2, 3, audit.ErrNotJSON},
		{"garbage line inserted", edit(func(l [][]byte) [][]byte {
			return append(l[:2:2], append([][]byte{[]byte("hello world\n")}, l[2:]...)...)
		}), 2, 3, audit.ErrNotJSON},
		{"foreign JSON line inserted", edit(func(l [][]byte) [][]byte {
			return append(l[:2:2], append([][]byte{[]byte(`{"a":1}` + "\n")}, l[2:]...)...)
		}), 2, 3, audit.ErrMalformed},
		{"uppercased stored hash", edit(func(l [][]byte) [][]byte {
			n := len(l[2])
			copy(l[2][n-3-64:], bytes.ToUpper(l[2][n-3-64:n-3]))
			return l
		}), 2, 3, audit.ErrMalformed},
		{"CRLF line endings", bytes.ReplaceAll(joinLines(orig), []byte("\n"), []byte("\r\n")), 0, 1, audit.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := verifyBytes(tt.log)
			assert.Equal(t, tt.wantN, n)
			if tt.wantLine == 0 {
				require.NoError(t, err)
				return
			}
			requireVerifyErr(t, err, tt.wantLine, tt.wantErr)
		})
	}
}

func TestTruncatedLastLine(t *testing.T) {
	log := buildLog(t, 5)
	lines := splitLines(log)
	line5 := len(log) - len(lines[4])
	tests := []struct {
		name    string
		cut     int // bytes kept
		wantN   int
		wantErr bool
	}{
		{"one byte of line 5", line5 + 1, 4, true},
		{"half of line 5", line5 + len(lines[4])/2, 4, true},
		{"inside the hash of line 5", len(log) - 20, 4, true},
		{"line 5 complete but no newline", len(log) - 1, 4, true},
		{"cut at a line boundary", line5, 4, false},
		{"only a fragment of line 1", 10, 0, true},
		{"empty file", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := verifyBytes(log[:tt.cut])
			assert.Equal(t, tt.wantN, n)
			if !tt.wantErr {
				require.NoError(t, err)
				return
			}
			requireVerifyErr(t, err, tt.wantN+1, audit.ErrTruncated)
			// Distinct from the tampering kinds so callers can say "crash?".
			assert.NotErrorIs(t, err, audit.ErrTampered)
			assert.NotErrorIs(t, err, audit.ErrBrokenLink)
			assert.Contains(t, err.Error(), "incomplete")
		})
	}
}

// A truncated line followed by more data is damage, not a crash.
func TestTruncatedLineInTheMiddle(t *testing.T) {
	lines := splitLines(buildLog(t, 5))
	lines[2] = lines[2][:len(lines[2])/2]
	n, err := verifyBytes(joinLines(lines))
	assert.Equal(t, 2, n)
	var ve *audit.VerifyError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, 3, ve.Line)
	assert.NotErrorIs(t, err, audit.ErrTruncated)
}

func TestOpenCreatesWithPrivatePermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "audit.jsonl")
	w, err := audit.Open(path)
	require.NoError(t, err)
	_, err = w.Append(sampleEvent(0))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, fi.Mode().Perm()&0o077, "file mode %v", fi.Mode())
	di, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Zero(t, di.Mode().Perm()&0o077, "dir mode %v", di.Mode())

	_, err = w.Append(sampleEvent(1))
	assert.ErrorIs(t, err, os.ErrClosed)
	assert.NoError(t, w.Close(), "second Close")
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var entries []audit.Entry
	for _, batch := range []int{3, 2, 0, 1} {
		w, err := audit.Open(path)
		require.NoError(t, err)
		w.Sync = true
		for range batch {
			e, err := w.Append(sampleEvent(len(entries)))
			require.NoError(t, err)
			entries = append(entries, e)
		}
		require.NoError(t, w.Close())
	}
	for i, e := range entries {
		assert.Equal(t, int64(i+1), e.Seq)
	}
	n, err := verifyFile(t, path)
	require.NoError(t, err)
	assert.Equal(t, 6, n)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := splitLines(data)
	assert.True(t, bytes.HasPrefix(lines[3], []byte(`{"seq":4,"prev":"`+entries[2].Hash+`"`)), "%s", lines[3])
}

// After a crash mid-write, Open cuts the incomplete record and continues
// the chain from the last complete one.
func TestOpenAfterCrash(t *testing.T) {
	log := buildLog(t, 4)
	for _, cut := range []int{1, 7, 40, len(splitLines(log)[3]) - 1} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			require.NoError(t, os.WriteFile(path, log[:len(log)-cut], 0o600))
			_, err := verifyFile(t, path)
			require.ErrorIs(t, err, audit.ErrTruncated)

			w, err := audit.Open(path)
			require.NoError(t, err)
			assert.Equal(t, int64(len(splitLines(log)[3])-cut), w.Dropped())
			e, err := w.Append(sampleEvent(9))
			require.NoError(t, err)
			assert.Equal(t, int64(4), e.Seq)
			require.NoError(t, w.Close())

			n, err := verifyFile(t, path)
			require.NoError(t, err)
			assert.Equal(t, 4, n)
		})
	}
}

// Open must never extend (or cut) a file that is not an intact audit log.
func TestOpenRefusesForeignFiles(t *testing.T) {
	good := buildLog(t, 3)
	tampered := bytes.Clone(good)
	tampered[len(tampered)-30] ^= 1
	tests := []struct {
		name    string
		content string
	}{
		{"text file", "hello\nworld\n"},
		{"no newline at all", "some binary\x00stuff"},
		{"foreign JSON", `{"a":1}` + "\n"},
		{"tampered last record", string(tampered)},
		{"garbage after records", string(good) + "\x00\x00\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			w, err := audit.Open(path)
			require.Error(t, err)
			assert.Nil(t, w)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.content, string(after), "file must be left alone")
		})
	}
}

func TestLongRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	big := strings.Repeat("x", 300<<10) // longer than the verifier's buffer and the first tail read
	w, err := audit.Open(path)
	require.NoError(t, err)
	_, err = w.Append(map[string]string{"a": "small"})
	require.NoError(t, err)
	_, err = w.Append(map[string]string{"big": big})
	require.NoError(t, err)
	require.NoError(t, w.Close())

	w, err = audit.Open(path) // tail read must span the 300 KiB line
	require.NoError(t, err)
	e, err := w.Append(map[string]string{"big": big + "y"})
	require.NoError(t, err)
	assert.Equal(t, int64(3), e.Seq)
	_, err = w.Append(map[string]string{"a": "small"})
	require.NoError(t, err)
	require.NoError(t, w.Close())

	n, err := verifyFile(t, path)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
}

func TestTwoWritersAlternating(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w1, err := audit.Open(path)
	require.NoError(t, err)
	defer w1.Close()
	w2, err := audit.Open(path)
	require.NoError(t, err)
	defer w2.Close()

	var seq int64
	for i := range 10 {
		for _, w := range []*audit.Writer{w1, w2, w2, w1} {
			e, err := w.Append(sampleEvent(i))
			require.NoError(t, err)
			seq++
			require.Equal(t, seq, e.Seq)
		}
	}
	n, err := verifyFile(t, path)
	require.NoError(t, err)
	assert.Equal(t, 40, n)
}

func TestConcurrentWriters(t *testing.T) {
	const writers, goroutines, perGoroutine = 8, 4, 50
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	ws := make([]*audit.Writer, writers)
	for i := range ws {
		w, err := audit.Open(path)
		require.NoError(t, err)
		ws[i] = w
	}

	type rec struct {
		W, G, I int
	}
	seqs := make(chan int64, writers*goroutines*perGoroutine)
	var wg sync.WaitGroup
	for wi, w := range ws {
		for g := range goroutines {
			wg.Go(func() {
				for i := range perGoroutine {
					e, err := w.Append(rec{wi, g, i})
					if !assert.NoError(t, err) {
						return
					}
					seqs <- e.Seq
				}
			})
		}
	}
	wg.Wait()
	close(seqs)
	for _, w := range ws {
		require.NoError(t, w.Close())
	}

	const total = writers * goroutines * perGoroutine
	seen := map[int64]bool{}
	for s := range seqs {
		assert.False(t, seen[s], "seq %d handed out twice", s)
		seen[s] = true
	}
	assert.Len(t, seen, total)

	n, err := verifyFile(t, path)
	require.NoError(t, err)
	assert.Equal(t, total, n)

	// Each goroutine's records appear in its own order.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	next := map[[2]int]int{}
	for _, line := range splitLines(data) {
		var r rec
		require.NoError(t, json.Unmarshal(line, &r))
		k := [2]int{r.W, r.G}
		assert.Equal(t, next[k], r.I)
		next[k] = r.I + 1
	}
}

const (
	childEnvPath = "AIRLOCK_AUDIT_TEST_CHILD_PATH"
	childEnvID   = "AIRLOCK_AUDIT_TEST_CHILD_ID"
	childEnvGo   = "AIRLOCK_AUDIT_TEST_CHILD_GO"
	childRecords = 300
)

// TestMultiProcess re-executes the test binary as several processes that
// append to one file at the same time.
func TestMultiProcess(t *testing.T) {
	if path := os.Getenv(childEnvPath); path != "" {
		runChild(t, path)
		return
	}
	const children = 6
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	goFile := filepath.Join(dir, "go")

	type proc struct {
		cmd *exec.Cmd
		out *bytes.Buffer
	}
	var procs []proc
	for i := range children {
		cmd, out := startChild(t, i, path, goFile)
		procs = append(procs, proc{cmd, out})
	}
	// Release all children at once so their appends interleave.
	require.NoError(t, os.WriteFile(goFile, nil, 0o600))
	for i, p := range procs {
		require.NoError(t, p.cmd.Wait(), "child %d output:\n%s", i, p.out)
	}

	n, err := verifyFile(t, path)
	require.NoError(t, err)
	assert.Equal(t, children*childRecords, n)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	perChild := map[int]int{}
	switches := 0
	last := -1
	for _, line := range splitLines(data) {
		var r struct{ Child, I int }
		require.NoError(t, json.Unmarshal(line, &r))
		assert.Equal(t, perChild[r.Child], r.I, "child %d out of order", r.Child)
		perChild[r.Child]++
		if r.Child != last {
			switches++
			last = r.Child
		}
	}
	assert.Len(t, perChild, children)
	t.Logf("%d records, writer changed %d times", n, switches)
}

func runChild(t *testing.T, path string) {
	var id int
	_, err := fmt.Sscan(os.Getenv(childEnvID), &id)
	require.NoError(t, err)
	w, err := audit.Open(path)
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for !fileExists(os.Getenv(childEnvGo)) {
		require.True(t, time.Now().Before(deadline), "parent never said go")
		time.Sleep(time.Millisecond)
	}
	for i := range childRecords {
		_, err := w.Append(struct {
			Child, I int
			Pad      string
		}{id, i, strings.Repeat("p", 200)})
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
}

func startChild(t *testing.T, id int, path, goFile string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMultiProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		childEnvPath+"="+path,
		childEnvID+"="+fmt.Sprint(id),
		childEnvGo+"="+goFile)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	return cmd, &out
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestBadRecords(t *testing.T) {
	tests := []struct {
		name    string
		rec     any
		wantErr bool
	}{
		{"string", "hello", true},
		{"number", 42, true},
		{"null", nil, true},
		{"nil map", map[string]int(nil), true},
		{"array", []int{1, 2}, true},
		{"bool", true, true},
		{"func value", map[string]any{"f": func() {}}, true},
		{"channel", map[string]any{"c": make(chan int)}, true},
		{"NaN", map[string]float64{"x": math.NaN()}, true},
		{"invalid raw JSON", json.RawMessage(`{"a":`), true},
		{"raw array", json.RawMessage(`[1]`), true},
		{"marshaler error", failingMarshaler{}, true},
		{"reserved seq", map[string]int{"seq": 1}, true},
		{"reserved prev", map[string]string{"prev": ""}, true},
		{"reserved hash", struct {
			Hash string `json:"hash"`
		}{"x"}, true},
		{"escaped reserved key", json.RawMessage(`{"a":1, "s\u0065q":2}`), true},
		{"nested seq is fine", map[string]any{"x": map[string]int{"seq": 1}, "y": []any{map[string]int{"hash": 2}}}, false},
		{"seq in a value is fine", map[string]string{"note": `"seq":1,"hash":"`}, false},
		{"key containing seq is fine", map[string]int{"seqno": 1, "prev_hash": 2}, false},
		{"raw object", json.RawMessage(` { "a" : [1, {"seq":2}] } `), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			w, err := audit.Open(path)
			require.NoError(t, err)
			defer w.Close()
			_, err = w.Append(sampleEvent(0))
			require.NoError(t, err)
			before, err := os.ReadFile(path)
			require.NoError(t, err)

			_, err = w.Append(tt.rec)
			after, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			if tt.wantErr {
				require.Error(t, err)
				assert.Equal(t, before, after, "nothing may be written")
			} else {
				require.NoError(t, err)
			}

			// The writer is still usable and the chain intact.
			e, err := w.Append(sampleEvent(1))
			require.NoError(t, err)
			want := 2
			if !tt.wantErr {
				want = 3
			}
			assert.Equal(t, int64(want), e.Seq)
			n, err := verifyFile(t, path)
			require.NoError(t, err)
			assert.Equal(t, want, n)
		})
	}
}

type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("boom") }

func TestAwkwardStrings(t *testing.T) {
	values := []string{
		"line1\nline2",
		"cr\r\nlf",
		"tab\there",
		"\u2028 and \u2029",
		"</script><script>alert(1)</script>",
		"a & b &amp; c",
		"日本語 ✓ 🎉",
		`"quoted" \back\slash\ `,
		"nul\x00 bel\x07 esc\x1b",
		`{"seq":1,"prev":"","hash":"` + strings.Repeat("0", 64) + `"}`,
		"",
	}
	var buf bytes.Buffer
	w := audit.New(&buf)
	for _, v := range values {
		_, err := w.Append(map[string]string{"v": v, "k\n<&>": v})
		require.NoError(t, err)
	}
	// Pre-escaped input (as a Marshaler with HTML escaping would produce)
	// is kept byte for byte and verifies just the same.
	_, err := w.Append(json.RawMessage(`{"v":"\u003c/script\u003e \u0026"}`))
	require.NoError(t, err)

	out := buf.Bytes()
	assert.Equal(t, len(values)+1, bytes.Count(out, []byte{'\n'}), "one line per record")
	assert.Contains(t, string(out), "</script>", "no HTML escaping")
	assert.Contains(t, string(out), `\u003c/script\u003e \u0026`)
	n, err := verifyBytes(out)
	require.NoError(t, err)
	assert.Equal(t, len(values)+1, n)

	for i, line := range splitLines(out)[:len(values)] {
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m), "%s", line)
		assert.Equal(t, values[i], m["v"])
		assert.Equal(t, values[i], m["k\n<&>"])
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(splitLines(out)[len(values)], &m))
	assert.Equal(t, "</script> &", m["v"])
}

func TestSyncOnNonFile(t *testing.T) {
	var buf bytes.Buffer
	w := audit.New(&buf)
	w.Sync = true // bytes.Buffer has no Sync: ignored
	_, err := w.Append(sampleEvent(0))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	_, err = w.Append(sampleEvent(1))
	assert.ErrorIs(t, err, os.ErrClosed)
}

// flakyWriter fails its first write halfway, like a full disk.
type flakyWriter struct {
	buf    bytes.Buffer
	failed bool
}

func (f *flakyWriter) Write(p []byte) (int, error) {
	if !f.failed {
		f.failed = true
		f.buf.Write(p[:len(p)/2])
		return len(p) / 2, errors.New("disk full")
	}
	return f.buf.Write(p)
}

func TestWriteErrorDoesNotAdvanceChain(t *testing.T) {
	var fw flakyWriter
	w := audit.New(&fw)
	_, err := w.Append(sampleEvent(0))
	require.Error(t, err)
	e, err := w.Append(sampleEvent(1))
	require.NoError(t, err)
	assert.Equal(t, int64(1), e.Seq, "failed record must not consume a seq")
}

func BenchmarkAppend(b *testing.B) {
	rec := sampleEvent(1)
	line := buildLog(b, 1)
	b.Logf("record line: %d bytes", len(line))

	b.Run("file", func(b *testing.B) {
		w, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"))
		require.NoError(b, err)
		defer w.Close()
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.Append(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("file-parallel", func(b *testing.B) {
		w, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"))
		require.NoError(b, err)
		defer w.Close()
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := w.Append(rec); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	// Two Writers on one file alternate, so every Append re-reads the tail:
	// the worst case for several processes sharing a log.
	b.Run("two-writers-alternating", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "audit.jsonl")
		w1, err := audit.Open(path)
		require.NoError(b, err)
		defer w1.Close()
		w2, err := audit.Open(path)
		require.NoError(b, err)
		defer w2.Close()
		ws := [2]*audit.Writer{w1, w2}
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := ws[i&1].Append(rec); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("file-sync", func(b *testing.B) {
		w, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"))
		require.NoError(b, err)
		defer w.Close()
		w.Sync = true
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.Append(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("discard", func(b *testing.B) {
		w := audit.New(discard{})
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.Append(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func BenchmarkVerify(b *testing.B) {
	log := buildLog(b, 1000)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		if n, err := verifyBytes(log); err != nil || n != 1000 {
			b.Fatal(n, err)
		}
	}
}
