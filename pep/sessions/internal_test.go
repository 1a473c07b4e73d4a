package sessions

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fakeProc(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	old := procRoot
	procRoot = root
	t.Cleanup(func() { procRoot = old })
	return root
}

func writeProc(t *testing.T, root string, pid, name, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(root, pid), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(root, pid, name), []byte(content), 0o600))
}

// A comm may hold spaces and parentheses: the fields count from the last ')'.
func TestReadStat(t *testing.T) {
	root := fakeProc(t)
	writeProc(t, root, "self", "stat", "1 (x) S")
	const tail = " 1 1 1 0 -1 4194560 100 0 0 0 1 1 0 0 20 0 1 0 987654321 1000 100"
	writeProc(t, root, "42", "stat", "42 (we(ird) ) S) S"+tail)
	writeProc(t, root, "42", "cmdline", "agent\x00--flag\x00value\x00")
	writeProc(t, root, "43", "stat", "43 (z) Z"+tail)
	writeProc(t, root, "44", "stat", "44 (short) S 1 2")

	c, err := ProcessClient(42)
	require.NoError(t, err)
	assert.Equal(t, &Client{PID: 42, StartTime: 987654321, Cmdline: "agent --flag value"}, c)
	assert.True(t, c.Alive())
	assert.Equal(t, "client-42-987654321", ClientSessionID(c))

	_, err = ProcessClient(43)
	assert.ErrorContains(t, err, "exited")
	assert.False(t, (&Client{PID: 43, StartTime: 987654321}).Alive())
	_, err = ProcessClient(44)
	assert.ErrorContains(t, err, "fields")

	// Gone: no entry. Cannot tell (the entry cannot be read): alive, so
	// that GC never removes the session of a live client.
	assert.False(t, (&Client{PID: 46, StartTime: 1}).Alive())
	require.NoError(t, os.MkdirAll(filepath.Join(root, "47", "stat"), 0o700))
	assert.True(t, (&Client{PID: 47, StartTime: 1}).Alive())
}

func TestNoProc(t *testing.T) {
	fakeProc(t) // empty: no /proc
	c, err := ProcessClient(os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, &Client{PID: os.Getpid()}, c)
	assert.True(t, c.Alive(), "the PID alone")
	c, err = ParentClient()
	require.NoError(t, err)
	assert.Equal(t, os.Getppid(), c.PID)
	assert.Zero(t, c.StartTime)
}

// A writer that waited for a lock file GC removed meanwhile takes the new
// one, so it never writes beside a writer holding the new one.
func TestLockFileReplacedWhileWaiting(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	base := fileBase("s")
	first, err := s.lock(context.Background(), base)
	require.NoError(t, err)

	got := make(chan *os.File)
	go func() {
		f, err := s.lock(context.Background(), base)
		assert.NoError(t, err)
		got <- f
	}()
	time.Sleep(20 * time.Millisecond) // the second is waiting on the first file
	require.NoError(t, os.Remove(s.lockPath(base)))
	unlock(first)
	first.Close()

	second := <-got
	require.NotNil(t, second)
	defer second.Close()
	held, err := second.Stat()
	require.NoError(t, err)
	now, err := os.Stat(s.lockPath(base))
	require.NoError(t, err, "the waiter created a new lock file")
	assert.True(t, os.SameFile(held, now), "the waiter holds the lock file at the path")

	// And it excludes a third.
	f, err := os.OpenFile(s.lockPath(base), openLockFlags, 0o600)
	require.NoError(t, err)
	defer f.Close()
	busy, err := tryLock(f)
	require.NoError(t, err)
	assert.True(t, busy)
}

// A lock holder that is stuck (stopped, say) makes writers fail closed after
// LockTimeout, without piling up a blocked thread per attempt.
func TestStuckLockHolder(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	s.LockTimeout = 5 * time.Millisecond
	held, err := s.lock(context.Background(), fileBase("s"))
	require.NoError(t, err)
	h := s.Session("s", nil)
	for range 3 * maxBlockedWaits {
		err := h.Refused(context.Background())
		require.ErrorIs(t, err, errLockTimeout)
		assert.LessOrEqual(t, s.blocked.Load(), int32(maxBlockedWaits))
	}
	assert.Equal(t, int32(maxBlockedWaits), s.blocked.Load())
	unlock(held)
	held.Close()
	// The background waits take the lock in turn and let it go.
	require.Eventually(t, func() bool { return s.blocked.Load() == 0 }, 5*time.Second, time.Millisecond)
	require.NoError(t, h.Refused(context.Background()))
	rec, err := s.Get("s")
	require.NoError(t, err)
	assert.Equal(t, 1, rec.Refused)
}
