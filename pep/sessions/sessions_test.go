package sessions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/airlock-dev/airlock/pep"
	"github.com/airlock-dev/airlock/pep/sessions"
)

var ctx = context.Background()

func openStore(t testing.TB, dir string) *sessions.Store {
	t.Helper()
	s, err := sessions.Open(dir)
	require.NoError(t, err)
	return s
}

func named(t testing.TB, s *sessions.Store, name string) *sessions.Session {
	t.Helper()
	h := s.Session(name, nil)
	require.NoError(t, h.Err())
	require.True(t, h.Named())
	return h
}

func ev(id string) pep.TaintEvent {
	return pep.TaintEvent{Server: "web", Tool: "fetch", At: time.Date(2026, 11, 29, 13, 46, 10, 0, time.UTC), DecisionID: id}
}

func ids(events []pep.TaintEvent) []string {
	out := []string{}
	for _, e := range events {
		out = append(out, e.DecisionID)
	}
	return out
}

func state(t testing.TB, h *sessions.Session) pep.SessionState {
	t.Helper()
	st, err := h.State(ctx)
	require.NoError(t, err)
	return st
}

func TestTaintIsSharedAndClearedByAPerson(t *testing.T) {
	dir := t.TempDir()
	a := named(t, openStore(t, dir), "work")
	// Another airlock process: its own store and handle on the same directory.
	other := openStore(t, dir)
	b := named(t, other, "work")

	st := state(t, b)
	assert.Equal(t, pep.SessionState{ID: "work"}, st, "no file yet: clean")
	_, err := other.Get("work")
	require.ErrorIs(t, err, fs.ErrNotExist)

	require.NoError(t, a.Taint(ctx, ev("d1")))
	st = state(t, b)
	assert.True(t, st.Tainted)
	assert.Equal(t, "work", st.ID)
	assert.Equal(t, []pep.TaintEvent{ev("d1")}, st.Taint)

	require.NoError(t, b.Refused(ctx))
	require.NoError(t, a.Refused(ctx))
	rec, err := other.Get("work")
	require.NoError(t, err)
	assert.Equal(t, 2, rec.Refused)
	assert.True(t, rec.Named)
	assert.Nil(t, rec.Client)
	assert.Equal(t, sessions.FormatVersion, rec.Version)
	assert.False(t, rec.Created.IsZero())
	assert.Equal(t, uint64(3), rec.Rev)

	rec, err = other.Clear("work", []string{"d1"}, "alice", "read the page; harmless", time.Time{})
	require.NoError(t, err)
	assert.False(t, rec.Tainted)
	assert.Equal(t, 1, rec.Epoch)
	assert.Equal(t, 0, rec.Refused, "a clear that leaves the session clean resets the count")
	require.Len(t, rec.Cleared, 1)
	assert.Equal(t, "alice", rec.Cleared[0].By)
	assert.Equal(t, 2, rec.Cleared[0].Refused)
	assert.Equal(t, []string{"d1"}, ids(rec.Cleared[0].Taint))

	for _, h := range []*sessions.Session{a, b} {
		assert.False(t, state(t, h).Tainted)
		n, _ := h.Rollbacks()
		assert.Zero(t, n, "a clear is not a rollback")
	}

	// Taint after a clear works, and is seen by the other handle.
	require.NoError(t, a.Taint(ctx, ev("d2")))
	assert.Equal(t, []string{"d2"}, ids(state(t, b).Taint))
	// The same decision recorded twice is one event.
	require.NoError(t, b.Taint(ctx, ev("d2")))
	assert.Equal(t, []string{"d2"}, ids(state(t, a).Taint))
}

func TestTaintIsDurable(t *testing.T) {
	dir := t.TempDir()
	h := named(t, openStore(t, dir), "s")
	require.NoError(t, h.Taint(ctx, ev("d1")))

	// A restart: nothing of the first store is used.
	st := state(t, named(t, openStore(t, dir), "s"))
	assert.True(t, st.Tainted)
	assert.Equal(t, []string{"d1"}, ids(st.Taint))

	// On disk: the file is a complete record.
	raw, err := os.ReadFile(openStore(t, dir).Path("s"))
	require.NoError(t, err)
	var rec sessions.Record
	require.NoError(t, json.Unmarshal(raw, &rec))
	assert.Equal(t, "s", rec.ID)
	assert.True(t, rec.Tainted)
}

func TestClear(t *testing.T) {
	type step func(t *testing.T, s *sessions.Store, h *sessions.Session)
	taint := func(id string) step {
		return func(t *testing.T, _ *sessions.Store, h *sessions.Session) { require.NoError(t, h.Taint(ctx, ev(id))) }
	}
	refused := func(t *testing.T, _ *sessions.Store, h *sessions.Session) { require.NoError(t, h.Refused(ctx)) }

	tests := []struct {
		name    string
		before  []step
		ids     []string
		by, why string
		wantErr error  // errors.Is
		errText string // or a message
		left    []string
		epoch   int
		refused int
	}{
		{name: "everything", before: []step{taint("a"), taint("b"), refused}, ids: []string{"a", "b"},
			by: "alice", why: "ok", left: []string{}, epoch: 1, refused: 0},
		{name: "a taint that arrived after the person looked stays",
			before: []step{taint("a"), refused, taint("late")}, ids: []string{"a"},
			by: "alice", why: "ok", left: []string{"late"}, epoch: 1, refused: 1},
		{name: "unknown IDs are ignored", before: []step{taint("a")}, ids: []string{"a", "zzz"},
			by: "alice", why: "ok", left: []string{}, epoch: 1},
		{name: "none of the IDs", before: []step{taint("a"), refused}, ids: []string{"zzz"},
			by: "alice", why: "ok", wantErr: sessions.ErrNothingToClear, left: []string{"a"}, refused: 1},
		{name: "not tainted", before: []step{refused}, ids: []string{"a"},
			by: "alice", why: "ok", wantErr: sessions.ErrNothingToClear, left: []string{}, refused: 1},
		{name: "no session", ids: []string{"a"}, by: "alice", why: "ok", wantErr: fs.ErrNotExist},
		{name: "no reason", before: []step{taint("a")}, ids: []string{"a"}, by: "alice", why: "  ", errText: "reason"},
		{name: "nobody", before: []step{taint("a")}, ids: []string{"a"}, by: "", why: "ok", errText: "who"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, t.TempDir())
			h := named(t, s, "s")
			for _, st := range tt.before {
				st(t, s, h)
			}
			before, _ := s.Get("s")
			at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			rec, err := s.Clear("s", tt.ids, tt.by, tt.why, at)
			switch {
			case tt.wantErr != nil:
				require.ErrorIs(t, err, tt.wantErr)
			case tt.errText != "":
				require.ErrorContains(t, err, tt.errText)
				after, _ := s.Get("s")
				assert.Equal(t, before, after, "a refused clear changes nothing")
				return
			default:
				require.NoError(t, err)
			}
			if errors.Is(tt.wantErr, fs.ErrNotExist) {
				_, err := os.Stat(filepath.Join(s.Dir(), "sessions"))
				require.NoError(t, err)
				assert.Empty(t, files(t, s), "no lock file for a session that does not exist")
				return
			}
			assert.Equal(t, tt.left, ids(rec.Taint))
			assert.Equal(t, len(tt.left) > 0, rec.Tainted)
			assert.Equal(t, tt.epoch, rec.Epoch)
			assert.Equal(t, tt.refused, rec.Refused)
			stored, err := s.Get("s")
			require.NoError(t, err)
			assert.Equal(t, rec, stored, "what Clear returns is what is stored")
			if tt.wantErr != nil {
				assert.Equal(t, before, stored, "nothing to clear: unchanged")
				return
			}
			require.Len(t, rec.Cleared, 1)
			c := rec.Cleared[0]
			assert.Equal(t, at, c.At)
			assert.Equal(t, tt.by, c.By)
			assert.Equal(t, tt.why, c.Reason)
			assert.Equal(t, 1, c.Epoch)
			assert.Equal(t, len(tt.left), c.Remaining)
			assert.Equal(t, len(before.Taint)-len(tt.left), len(c.Taint))
			// The handle that saw the taint follows the clear.
			assert.Equal(t, tt.left, ids(state(t, h).Taint))
		})
	}
}

// files lists the session directory.
func files(t testing.TB, s *sessions.Store) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(s.Dir(), "sessions"))
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestDeletedSessionFile(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	h := named(t, s, "s")
	var reported []*sessions.RollbackError
	h.OnRollback = func(e *sessions.RollbackError) { reported = append(reported, e) }
	require.NoError(t, h.Taint(ctx, ev("d1")))
	require.NoError(t, os.Remove(s.Path("s")))

	// The limit: a process that starts now, before anyone that saw the
	// taint touches the session again, sees it clean.
	restarted := named(t, openStore(t, dir), "s")
	assert.False(t, state(t, restarted).Tainted)

	// The handle that saw the taint keeps it, says so, and writes it back.
	st := state(t, h)
	assert.True(t, st.Tainted)
	assert.Equal(t, []string{"d1"}, ids(st.Taint))
	require.Len(t, reported, 1)
	rb := reported[0]
	assert.False(t, rb.FileExists)
	assert.Equal(t, []string{"d1"}, ids(rb.Missing))
	assert.NoError(t, rb.HealErr)
	assert.Contains(t, rb.Error(), "was deleted")
	n, last := h.Rollbacks()
	assert.Equal(t, 1, n)
	assert.Same(t, rb, last)

	// Back on disk, so every process sees it again.
	assert.True(t, state(t, restarted).Tainted)
	rec, err := s.Get("s")
	require.NoError(t, err)
	assert.Equal(t, []string{"d1"}, ids(rec.Taint))
	assert.Greater(t, rec.Rev, rb.SeenRev)

	// It is reported once, not on every read.
	assert.True(t, state(t, h).Tainted)
	assert.Len(t, reported, 1)
}

func TestRolledBackSessionFile(t *testing.T) {
	tests := []struct {
		name string
		// tamper replaces the file after the taint; clean is the clean
		// version saved before the taint.
		tamper func(t *testing.T, path string, clean []byte)
	}{
		{"an older clean copy", func(t *testing.T, path string, clean []byte) {
			require.NoError(t, os.WriteFile(path, clean, 0o600))
		}},
		{"a clean record with a higher revision but no clear", func(t *testing.T, path string, clean []byte) {
			var rec map[string]any
			require.NoError(t, json.Unmarshal(clean, &rec))
			rec["rev"] = 1000
			raw, err := json.Marshal(rec)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, raw, 0o600))
		}},
		{"deleted, then recreated clean by another process", func(t *testing.T, path string, _ []byte) {
			require.NoError(t, os.Remove(path))
			other := named(t, openStore(t, filepath.Dir(filepath.Dir(path))), "s")
			for range 5 {
				require.NoError(t, other.Refused(ctx))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, t.TempDir())
			h := named(t, s, "s")
			require.NoError(t, h.Refused(ctx))
			clean, err := os.ReadFile(s.Path("s"))
			require.NoError(t, err)
			require.NoError(t, h.Taint(ctx, ev("d1")))
			require.NoError(t, h.Taint(ctx, ev("d2")))

			tt.tamper(t, s.Path("s"), clean)

			st := state(t, h)
			assert.True(t, st.Tainted)
			assert.ElementsMatch(t, []string{"d1", "d2"}, ids(st.Taint))
			n, rb := h.Rollbacks()
			assert.Equal(t, 1, n)
			require.NotNil(t, rb)
			assert.ElementsMatch(t, []string{"d1", "d2"}, ids(rb.Missing))
			assert.True(t, rb.FileExists)

			rec, err := s.Get("s")
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{"d1", "d2"}, ids(rec.Taint), "written back")

			// A real clear still clears.
			_, err = s.Clear("s", []string{"d1", "d2"}, "alice", "reviewed", time.Time{})
			require.NoError(t, err)
			assert.False(t, state(t, h).Tainted)
			n, _ = h.Rollbacks()
			assert.Equal(t, 1, n)
		})
	}
}

func TestRollbackWhileWritingBackFails(t *testing.T) {
	s := openStore(t, t.TempDir())
	s.LockTimeout = 50 * time.Millisecond
	h := named(t, s, "s")
	require.NoError(t, h.Taint(ctx, ev("d1")))
	require.NoError(t, os.Remove(s.Path("s")))

	// Someone holds the session's lock.
	lock := holdLock(t, s, "s")
	st := state(t, h)
	assert.True(t, st.Tainted, "still tainted from memory")
	_, rb := h.Rollbacks()
	require.NotNil(t, rb)
	assert.ErrorContains(t, rb.HealErr, "still locked")
	assert.Contains(t, rb.Error(), "writing the taint back failed")
	// Writes fail closed meanwhile.
	assert.Error(t, h.Taint(ctx, ev("d2")))
	releaseLock(lock)

	assert.True(t, state(t, h).Tainted)
	rec, err := s.Get("s")
	require.NoError(t, err)
	assert.Equal(t, []string{"d1"}, ids(rec.Taint))
}

// holdLock takes the lock of session id the way the store does.
func holdLock(t *testing.T, s *sessions.Store, id string) *os.File {
	t.Helper()
	base := strings.TrimSuffix(filepath.Base(s.Path(id)), ".json")
	f, err := os.OpenFile(filepath.Join(filepath.Dir(s.Path(id)), base+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	t.Cleanup(func() { f.Close() })
	return f
}

func releaseLock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

func TestContextCancelsTheWaitForTheLock(t *testing.T) {
	s := openStore(t, t.TempDir())
	h := named(t, s, "s")
	lock := holdLock(t, s, "s")
	defer releaseLock(lock)
	c, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := h.Taint(c, ev("d1"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestPermissions(t *testing.T) {
	t.Run("created", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state", "airlock")
		s := openStore(t, dir)
		assert.Empty(t, s.Warnings())
		h := named(t, s, "s")
		require.NoError(t, h.Taint(ctx, ev("d1")))
		assertMode(t, dir, 0o700)
		assertMode(t, filepath.Join(dir, "sessions"), 0o700)
		names := files(t, s)
		require.Len(t, names, 2, "%v", names)
		for _, n := range names {
			assert.Regexp(t, `^[0-9a-f]{64}\.(json|lock)$`, n)
			assertMode(t, filepath.Join(dir, "sessions", n), 0o600)
		}
	})
	t.Run("too open", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "airlock")
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "sessions"), 0o755))
		require.NoError(t, os.Chmod(dir, 0o755))
		require.NoError(t, os.Chmod(filepath.Join(dir, "sessions"), 0o777))
		s := openStore(t, dir)
		assertMode(t, dir, 0o700)
		assertMode(t, filepath.Join(dir, "sessions"), 0o700)
		w := s.Warnings()
		require.Len(t, w, 2)
		assert.Contains(t, w[0], "0755")
		assert.Contains(t, w[1], "0777")
	})
	t.Run("not a directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(path, nil, 0o600))
		_, err := sessions.Open(path)
		assert.ErrorContains(t, err, "not a directory")
	})
	t.Run("sessions directory is a symlink", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(dir, "sessions")))
		_, err := sessions.Open(dir)
		assert.ErrorContains(t, err, "not a directory")
	})
}

func assertMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, want, fi.Mode().Perm(), path)
}

func TestUnreadableSessionFileFailsClosed(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, s *sessions.Store, path string)
		want  string
	}{
		{"not JSON", func(t *testing.T, _ *sessions.Store, path string) {
			require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"id":"s","taint":[`), 0o600))
		}, "unexpected end of JSON"},
		{"another session's file", func(t *testing.T, s *sessions.Store, path string) {
			require.NoError(t, named(t, s, "other").Refused(ctx))
			raw, err := os.ReadFile(s.Path("other"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, raw, 0o600))
		}, `holds session "other"`},
		{"a newer format", func(t *testing.T, _ *sessions.Store, path string) {
			require.NoError(t, os.WriteFile(path, []byte(`{"version":2,"id":"s"}`), 0o600))
		}, "format version 2"},
		{"a symlink", func(t *testing.T, s *sessions.Store, path string) {
			require.NoError(t, named(t, s, "other").Refused(ctx))
			require.NoError(t, os.Symlink(s.Path("other"), path))
		}, "too many levels of symbolic links"},
		{"a FIFO", func(t *testing.T, _ *sessions.Store, path string) {
			require.NoError(t, syscall.Mkfifo(path, 0o600))
		}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, t.TempDir())
			h := named(t, s, "s")
			tt.plant(t, s, s.Path("s"))
			_, err := h.State(ctx)
			require.ErrorContains(t, err, tt.want)
			assert.ErrorContains(t, h.Taint(ctx, ev("d1")), tt.want, "no write over a file that cannot be read")
			_, err = s.Get("s")
			assert.ErrorContains(t, err, tt.want)
			recs, err := s.List()
			assert.ErrorContains(t, err, tt.want)
			for _, r := range recs {
				assert.NotEqual(t, "s", r.ID)
			}
		})
	}
}

func TestSessionIDs(t *testing.T) {
	s := openStore(t, t.TempDir())
	me, err := sessions.ProcessClient(os.Getpid())
	require.NoError(t, err)
	myID := sessions.ClientSessionID(me)

	// Refused: every method fails, so the proxy fails closed and says why.
	for _, bad := range []string{"", "client-1-2", "client-123-456789"} {
		for _, c := range []*sessions.Client{nil, me} {
			h := s.Session(bad, c)
			require.Error(t, h.Err(), "%q", bad)
			_, err := h.State(ctx)
			assert.Equal(t, h.Err(), err)
			assert.Equal(t, h.Err(), h.Taint(ctx, ev("d")))
			assert.Equal(t, h.Err(), h.Refused(ctx))
		}
	}
	assert.Empty(t, files(t, s))

	// Any other string is a name, and never a path.
	names := []string{"work", "client-", "client-1", "client-a-b", "../../etc/passwd", "a/b", "\x00", strings.Repeat("x", 5000)}
	for _, name := range names {
		for _, c := range []*sessions.Client{nil, me} {
			h := s.Session(name, c)
			require.NoError(t, h.Err(), "%q", name)
			assert.True(t, h.Named())
			require.NoError(t, h.Taint(ctx, ev("d1")))
			rec, err := s.Get(name)
			require.NoError(t, err)
			assert.Equal(t, name, rec.ID)
			assert.True(t, rec.Named)
			assert.Nil(t, rec.Client, "a named session belongs to no one client")
			assert.Equal(t, filepath.Join(s.Dir(), "sessions"), filepath.Dir(s.Path(name)))
		}
	}

	// The client's own ID: a client-derived session.
	h := s.Session(myID, me)
	require.NoError(t, h.Err())
	assert.False(t, h.Named())
	assert.Equal(t, myID, h.ID())
	require.NoError(t, h.Refused(ctx))
	rec, err := s.Get(myID)
	require.NoError(t, err)
	assert.False(t, rec.Named)
	assert.Equal(t, me, rec.Client)
	assert.False(t, rec.Stale)

	recs, err := s.List()
	require.NoError(t, err)
	assert.Len(t, recs, len(names)+1)
}

// deadClient returns the identity of a process that has exited.
func deadClient(t *testing.T) *sessions.Client {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	c, err := sessions.ProcessClient(cmd.Process.Pid)
	require.NoError(t, err)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	return c
}

func TestGC(t *testing.T) {
	const maxAge = 24 * time.Hour
	type session struct {
		name    string // named session, or "" for a client session
		dead    bool   // client session: its client has exited
		tainted bool
	}
	tests := []struct {
		name    string
		session session
		later   time.Duration // GC runs this long after the last update
		stale   time.Duration // GCPolicy.StaleAge
		removed bool
	}{
		{"client gone, tainted", session{dead: true, tainted: true}, 0, 0, true},
		{"client gone, clean", session{dead: true}, 0, 0, true},
		{"client gone, younger than the stale age", session{dead: true, tainted: true}, maxAge / 2, maxAge, false},
		{"client gone, older than the stale age", session{dead: true, tainted: true}, maxAge, maxAge, true},
		{"client alive, tainted, old", session{tainted: true}, 10 * maxAge, 0, false},
		{"client alive, clean, old", session{}, 10 * maxAge, 0, false},
		{"named, old, clean", session{name: "n"}, 2 * maxAge, 0, true},
		{"named, old, tainted", session{name: "n", tainted: true}, 10 * maxAge, 0, false},
		{"named, recent, clean", session{name: "n"}, maxAge / 2, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, t.TempDir())
			var h *sessions.Session
			var err error
			if tt.session.name != "" {
				h = named(t, s, tt.session.name)
			} else {
				c, err := sessions.ProcessClient(os.Getpid())
				require.NoError(t, err)
				if tt.session.dead {
					c = deadClient(t)
				}
				h = s.Session(sessions.ClientSessionID(c), c)
				require.NoError(t, h.Err())
			}
			require.NoError(t, h.Refused(ctx))
			if tt.session.tainted {
				require.NoError(t, h.Taint(ctx, ev("d1")))
			}
			// A neighbour that must survive every GC.
			keep := named(t, s, "keep")
			require.NoError(t, keep.Taint(ctx, ev("k")))
			// A temporary file left by a writer that crashed.
			crashed := s.Path(h.ID()) + ".tmp-123"
			require.NoError(t, os.WriteFile(crashed, []byte("{"), 0o600))

			list, err := s.List()
			require.NoError(t, err)
			require.Len(t, list, 2)
			for _, r := range list {
				if r.ID == h.ID() {
					assert.Equal(t, tt.session.dead, r.Stale, "Stale in List")
				}
			}

			rec, err := s.Get(h.ID())
			require.NoError(t, err)
			removed, err := s.GC(sessions.GCPolicy{StaleAge: tt.stale, NamedAge: maxAge}, rec.Updated.Add(tt.later))
			require.NoError(t, err)
			assert.NoFileExists(t, crashed)
			_, err = s.Get("keep")
			require.NoError(t, err)
			_, err = s.Get(h.ID())
			if !tt.removed {
				require.NoError(t, err)
				assert.Empty(t, removed)
				assert.Len(t, files(t, s), 4, "both sessions and their locks")
				return
			}
			require.ErrorIs(t, err, fs.ErrNotExist)
			require.Len(t, removed, 1)
			assert.Equal(t, h.ID(), removed[0].ID)
			assert.Equal(t, tt.session.tainted, removed[0].Tainted)
			assert.Len(t, files(t, s), 2, "the lock file is removed with the session")
		})
	}

	t.Run("needs a maximum age", func(t *testing.T) {
		_, err := openStore(t, t.TempDir()).GC(sessions.GCPolicy{}, time.Now())
		assert.Error(t, err)
	})
	t.Run("orphan lock files", func(t *testing.T) {
		s := openStore(t, t.TempDir())
		lock := holdLock(t, s, "x")
		releaseLock(lock)
		require.Len(t, files(t, s), 1)
		removed, err := s.GC(sessions.GCPolicy{NamedAge: maxAge}, time.Now())
		require.NoError(t, err)
		assert.Empty(t, removed)
		assert.Empty(t, files(t, s))
	})
}

func TestCaps(t *testing.T) {
	s := openStore(t, t.TempDir())
	h := named(t, s, "s")
	// A record written by hand with more than the caps allow.
	const perClear = 25
	rec := sessions.Record{Version: sessions.FormatVersion, ID: "s", Rev: 1, Epoch: sessions.MaxCleared + 10}
	for i := range sessions.MaxTaint + 10 {
		rec.Taint = append(rec.Taint, ev("t"+strconv.Itoa(i)))
	}
	for i := range sessions.MaxCleared + 10 {
		c := sessions.ClearEvent{Epoch: i + 1, By: "a", Reason: "r"}
		for j := range perClear {
			c.Taint = append(c.Taint, ev(fmt.Sprintf("c%d-%d", i, j)))
		}
		rec.Cleared = append(rec.Cleared, c)
	}
	raw, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.Path("s"), raw, 0o600))

	st := state(t, h)
	require.Len(t, st.Taint, sessions.MaxTaint)
	assert.Equal(t, rec.Taint[0], st.Taint[0], "the first event is kept")
	assert.Equal(t, rec.Taint[len(rec.Taint)-1], st.Taint[len(st.Taint)-1], "and the latest")
	assert.Equal(t, rec.Taint[11], st.Taint[1], "the oldest after the first are dropped")

	require.NoError(t, h.Taint(ctx, ev("new")))
	got, err := s.Get("s")
	require.NoError(t, err)
	assert.Len(t, got.Taint, sessions.MaxTaint)
	assert.Equal(t, 11, got.TaintDropped)
	assert.Equal(t, "new", got.Taint[len(got.Taint)-1].DecisionID)
	assert.Equal(t, rec.Taint[0], got.Taint[0])
	events := 0
	for _, c := range got.Cleared {
		events += len(c.Taint)
	}
	assert.Equal(t, sessions.MaxClearedEvents, events)
	assert.Len(t, got.Cleared, sessions.MaxClearedEvents/perClear)
	assert.Equal(t, sessions.MaxCleared+10, got.Cleared[len(got.Cleared)-1].Epoch, "the latest clears are kept")

	// Clearing everything resets the dropped count into the clear.
	got, err = s.Clear("s", ids(got.Taint), "alice", "flood reviewed", time.Time{})
	require.NoError(t, err)
	assert.False(t, got.Tainted)
	assert.Zero(t, got.TaintDropped)
	assert.Equal(t, 11, got.Cleared[len(got.Cleared)-1].Dropped)
	assert.Len(t, got.Cleared, 1, "a clear of 1000 events leaves room for no other")
}
