package sessions_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/airlock-dev/airlock/pep"
	"github.com/airlock-dev/airlock/pep/sessions"
)

const (
	envDir    = "AIRLOCK_SESSIONS_TEST_DIR"
	envWorker = "AIRLOCK_SESSIONS_TEST_WORKER"
	envGo     = "AIRLOCK_SESSIONS_TEST_GO"

	sharedID  = "shared"
	workers   = 32
	perWorker = 4 // taints and refusals per worker
	readsPer  = 4 // State reads after each taint
)

func eventID(worker, k int) string { return fmt.Sprintf("w%02d-%d", worker, k) }

// clears says which workers also clear, twice: half-way and at the end.
func clears(worker int) bool { return worker%4 == 0 }

// work is one airlock process's share of the load on the shared session: it
// taints, counts refusals, reads the state over and over, and maybe clears
// what it saw. It returns the first inconsistency it meets.
func work(s *sessions.Store, h *sessions.Session, worker int) error {
	var lastRev uint64
	// get is a reader that takes no lock: what it reads must parse and be
	// consistent, and never go back in time.
	get := func() (sessions.Record, error) {
		rec, err := s.Get(sharedID)
		if errors.Is(err, os.ErrNotExist) {
			return rec, nil
		}
		if err != nil {
			return rec, fmt.Errorf("worker %d: read: %w", worker, err)
		}
		if rec.Rev < lastRev {
			return rec, fmt.Errorf("worker %d: revision went from %d back to %d", worker, lastRev, rec.Rev)
		}
		lastRev = rec.Rev
		return rec, consistent(rec)
	}
	for k := range perWorker {
		id := eventID(worker, k)
		if err := h.Taint(ctx, ev(id)); err != nil {
			return err
		}
		// Once Taint has returned, every reader sees the taint (or the
		// clear that removed it).
		rec, err := get()
		if err != nil {
			return err
		}
		if !slices.Contains(ids(rec.Taint), id) && !clearedIn(rec, id) {
			return fmt.Errorf("worker %d: %s is neither on the session nor cleared after Taint returned: %+v", worker, id, rec)
		}
		if err := h.Refused(ctx); err != nil {
			return err
		}
		for range readsPer {
			st, err := h.State(ctx)
			if err != nil {
				return fmt.Errorf("worker %d: State: %w", worker, err)
			}
			if st.ID != sharedID || st.Tainted != (len(st.Taint) > 0) {
				return fmt.Errorf("worker %d: inconsistent state %+v", worker, st)
			}
			if _, err := get(); err != nil {
				return err
			}
		}
		if clears(worker) && (k == perWorker/2 || k == perWorker-1) {
			rec, err := get()
			if err != nil {
				return err
			}
			_, err = s.Clear(sharedID, ids(rec.Taint), "worker "+strconv.Itoa(worker), "load test", time.Now())
			if err != nil && !errors.Is(err, sessions.ErrNothingToClear) {
				return fmt.Errorf("worker %d: clear: %w", worker, err)
			}
		}
	}
	if n, rb := h.Rollbacks(); n != 0 {
		return fmt.Errorf("worker %d: %d false rollbacks, the last: %w", worker, n, rb)
	}
	return nil
}

func clearedIn(rec sessions.Record, id string) bool {
	for _, c := range rec.Cleared {
		if slices.Contains(ids(c.Taint), id) {
			return true
		}
	}
	return false
}

// consistent checks the invariants of a record: no event twice, a complete
// clear history (the test stays below the caps), the flag matching the list.
func consistent(rec sessions.Record) error {
	seen := map[string]bool{}
	all := slices.Clone(rec.Taint)
	for i, c := range rec.Cleared {
		all = append(all, c.Taint...)
		if c.Epoch != i+1 {
			return fmt.Errorf("clear %d has epoch %d", i, c.Epoch)
		}
	}
	for _, e := range all {
		if seen[e.DecisionID] {
			return fmt.Errorf("event %s twice in %+v", e.DecisionID, rec)
		}
		seen[e.DecisionID] = true
	}
	if rec.Tainted != (len(rec.Taint) > 0) || len(rec.Cleared) != rec.Epoch || rec.TaintDropped != 0 {
		return fmt.Errorf("inconsistent record %+v", rec)
	}
	return nil
}

// checkFinal checks that no update was lost: every taint event is on the
// session or in exactly one clear, every refusal is counted or was reset
// by a clear that says so, and every write is in the revision.
func checkFinal(t *testing.T, s *sessions.Store) {
	t.Helper()
	rec, err := s.Get(sharedID)
	require.NoError(t, err)
	require.NoError(t, consistent(rec))
	count := map[string]int{}
	for _, e := range rec.Taint {
		count[e.DecisionID]++
	}
	refused := rec.Refused
	for _, c := range rec.Cleared {
		for _, e := range c.Taint {
			count[e.DecisionID]++
		}
		refused += c.Refused
		assert.LessOrEqual(t, c.Remaining, len(rec.Taint)+workers*perWorker)
	}
	for w := range workers {
		for k := range perWorker {
			assert.Equal(t, 1, count[eventID(w, k)], eventID(w, k))
		}
	}
	assert.Len(t, count, workers*perWorker, "no event that was not added")
	assert.Equal(t, workers*perWorker, refused, "refusals: %d now + those reset by clears", rec.Refused)
	assert.Equal(t, uint64(2*workers*perWorker+rec.Epoch), rec.Rev, "one revision per taint, refusal and clear")
	assert.Positive(t, rec.Epoch, "some clears happened")
	t.Logf("%d events on the session, %d clears, %d refusals since the last clean clear, revision %d",
		len(rec.Taint), rec.Epoch, rec.Refused, rec.Rev)
}

// TestHelperProcess is one airlock process of TestConcurrentProcesses.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(envDir)
	if dir == "" {
		t.Skip("a helper process of TestConcurrentProcesses")
	}
	worker, err := strconv.Atoi(os.Getenv(envWorker))
	require.NoError(t, err)
	s := openStore(t, dir)
	h := named(t, s, sharedID)
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(os.Getenv(envGo)); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "never told to go")
		time.Sleep(time.Millisecond)
	}
	// A reader beside the writer, as the other direction of a proxy.
	stop, reads, readErr := reader(s)
	require.NoError(t, work(s, h, worker))
	stop()
	require.NoError(t, readErr())
	t.Logf("reader: %d reads", reads())
}

// reader reads the shared session in a loop, with its own handle and
// without one, until stopped.
func reader(s *sessions.Store) (stop func(), reads func() int64, err func() error) {
	h := s.Session(sharedID, nil)
	var n atomic.Int64
	var first error
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			default:
			}
			st, e := h.State(ctx)
			if e == nil && st.Tainted != (len(st.Taint) > 0) {
				e = fmt.Errorf("inconsistent state %+v", st)
			}
			if e == nil && n.Load()%8 == 0 { // a full decode of the record, now and then
				var rec sessions.Record
				rec, e = s.Get(sharedID)
				if errors.Is(e, os.ErrNotExist) {
					e = nil
				} else if e == nil {
					e = consistent(rec)
				}
			}
			if e != nil {
				first = e
				return
			}
			n.Add(1)
			// A proxy reads once per decided frame; a reader that never
			// yields would only starve the writers of 32 processes on a
			// small machine.
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }, n.Load, func() error { <-finished; return first }
}

// TestConcurrentProcesses runs 32 airlock-like processes on one session at
// once (the test binary, re-executed).
func TestConcurrentProcesses(t *testing.T) {
	if os.Getenv(envDir) != "" {
		t.Skip("in a helper process")
	}
	dir := t.TempDir()
	s := openStore(t, dir)
	goFile := filepath.Join(dir, "go")
	type proc struct {
		cmd *exec.Cmd
		out *bytes.Buffer
	}
	procs := make([]proc, workers)
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envDir+"="+dir, envWorker+"="+strconv.Itoa(i), envGo+"="+goFile)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		procs[i] = proc{cmd, &out}
	}
	start := time.Now()
	// Release them together, so their updates interleave.
	require.NoError(t, os.WriteFile(goFile, nil, 0o600))
	for i, p := range procs {
		require.NoError(t, p.cmd.Wait(), "worker %d:\n%s", i, p.out)
		require.Contains(t, p.out.String(), "--- PASS: TestHelperProcess", "worker %d:\n%s", i, p.out)
	}
	t.Logf("%d processes in %s", workers, time.Since(start).Round(time.Millisecond))
	checkFinal(t, s)
}

// TestConcurrentGoroutines is the same load from goroutines of one process
// (for the race detector): some with their own store and handle, some
// sharing a handle, as the two directions of one proxy do.
func TestConcurrentGoroutines(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	shared := named(t, openStore(t, dir), sharedID)
	stop, reads, readErr := reader(s)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i := range workers {
		wg.Go(func() {
			st, err := sessions.Open(dir)
			if err != nil {
				errs[i] = err
				return
			}
			h := shared
			if i%2 == 0 {
				h = st.Session(sharedID, nil)
			}
			errs[i] = work(st, h, i)
		})
	}
	wg.Wait()
	stop()
	for i, err := range errs {
		require.NoError(t, err, "worker %d", i)
	}
	require.NoError(t, readErr())
	t.Logf("reader: %d reads", reads())
	checkFinal(t, s)
	var _ pep.Session = shared
}
