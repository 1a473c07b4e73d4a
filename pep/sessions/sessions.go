package sessions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/pep"
)

// DefaultLockTimeout is how long an update waits for a session's lock.
const DefaultLockTimeout = 10 * time.Second

// maxFileSize bounds what is read from a session file; the caps keep real
// records far below it.
const maxFileSize = 16 << 20

// ErrNothingToClear is returned (wrapped) by Clear when nothing was cleared:
// the session is not tainted, or none of the given taint events is on it.
var ErrNothingToClear = errors.New("nothing to clear")

// Store is a session directory. It is safe for concurrent use, and any
// number of processes may use one directory at once.
type Store struct {
	// LockTimeout bounds the wait for a session's lock (default
	// DefaultLockTimeout). Set it before using the store.
	LockTimeout time.Duration

	dir      string
	sdir     string
	warnings []string
	blocked  atomic.Int32 // blocking lock waits in progress, see acquire
}

// Open opens the store in the state directory dir, creating dir and
// dir/sessions with mode 0700. A directory that already exists with other
// permissions is set to 0700 and the change is reported by Warnings (the
// store works; the caller should log it). A directory owned by another user
// is an error.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("sessions: no state directory")
	}
	s := &Store{dir: dir, sdir: filepath.Join(dir, "sessions")}
	if err := s.ensureDir(dir, true); err != nil {
		return nil, err
	}
	if err := s.ensureDir(s.sdir, false); err != nil {
		return nil, err
	}
	return s, nil
}

// Dir returns the state directory.
func (s *Store) Dir() string { return s.dir }

// Warnings returns what Open changed: directories whose permissions it set
// to 0700.
func (s *Store) Warnings() []string { return slices.Clone(s.warnings) }

// Path returns the file that holds the session id.
func (s *Store) Path(id string) string { return s.jsonPath(fileBase(id)) }

// ensureDir creates path (0700) or checks it: a directory of ours, mode 0700.
// The state directory may be a symlink (the user's choice); the sessions
// directory inside it may not.
func (s *Store) ensureDir(path string, follow bool) error {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(path, 0o700); err != nil {
			return fmt.Errorf("sessions: %w", err)
		}
		// The umask may have taken bits away.
		if err := os.Chmod(path, 0o700); err != nil {
			return fmt.Errorf("sessions: %w", err)
		}
		if err := syncDir(filepath.Dir(path)); err != nil {
			return err
		}
		fi, err = stat(path)
	}
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("sessions: %s is not a directory", path)
	}
	if !ownedByUs(fi) {
		return fmt.Errorf("sessions: %s belongs to another user; refusing to keep sessions in it", path)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		if err := os.Chmod(path, 0o700); err != nil {
			return fmt.Errorf("sessions: %s has mode %04o and cannot be set to 0700: %w", path, perm, err)
		}
		s.warnings = append(s.warnings, fmt.Sprintf("%s had mode %04o; set it to 0700", path, perm))
	}
	return nil
}

func fileBase(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

func (s *Store) jsonPath(base string) string { return filepath.Join(s.sdir, base+".json") }
func (s *Store) lockPath(base string) string { return filepath.Join(s.sdir, base+".lock") }

// Get returns the session id. A session that was never written is an error
// that wraps fs.ErrNotExist.
func (s *Store) Get(id string) (Record, error) {
	var buf []byte
	rec, ok, err := s.read(id, &buf)
	if err != nil {
		return Record{}, err
	}
	if !ok {
		return Record{}, fmt.Errorf("sessions: no session %q: %w", id, fs.ErrNotExist)
	}
	rec.Stale = rec.stale()
	return rec, nil
}

// List returns every session, oldest first, with Stale computed. A file that
// cannot be read is reported in the error (errors.Join of one error per
// file) and the other sessions are still returned.
func (s *Store) List() ([]Record, error) {
	entries, err := os.ReadDir(s.sdir)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	var out []Record
	var errs []error
	var buf []byte
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !isBase(base) {
			continue
		}
		rec, ok, err := s.readBase(base, &buf)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue // removed since the listing
		}
		rec.Stale = rec.stale()
		out = append(out, rec)
	}
	slices.SortStableFunc(out, func(a, b Record) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, errors.Join(errs...)
}

// Clear removes the taint events whose decision IDs are in taintIDs from
// session id, as a person decided after looking at them: by who, why (a
// reason is required), at when (now if zero). Events not named stay, so a
// taint that arrived after the person looked keeps the session tainted. The
// clear is recorded (ClearEvent), the epoch goes up, and the refusal count
// is reset if the session ends up clean. The record is durable on return.
//
// When nothing is cleared (the session is not tainted, or none of the IDs is
// on it) Clear changes nothing and returns the record with an error that
// wraps ErrNothingToClear. A session that does not exist is an error that
// wraps fs.ErrNotExist.
func (s *Store) Clear(id string, taintIDs []string, by, reason string, at time.Time) (Record, error) {
	by, reason = strings.TrimSpace(by), strings.TrimSpace(reason)
	if reason == "" {
		return Record{}, errors.New("sessions: clearing a session needs a reason")
	}
	if by == "" {
		return Record{}, errors.New("sessions: clearing a session needs the name of who clears it")
	}
	if at.IsZero() {
		at = time.Now()
	}
	if _, err := s.Get(id); err != nil { // no lock file for a session that does not exist
		return Record{}, err
	}
	want := make(map[string]bool, len(taintIDs))
	for _, t := range taintIDs {
		want[t] = true
	}
	var nothing error
	rec, err := s.update(context.Background(), id, func(rec *Record, exists bool) (writeMode, error) {
		if !exists {
			return noWrite, fmt.Errorf("sessions: no session %q: %w", id, fs.ErrNotExist)
		}
		if !rec.Tainted {
			nothing = fmt.Errorf("sessions: session %q is not tainted: %w", id, ErrNothingToClear)
			return noWrite, nil
		}
		var cleared, kept []pep.TaintEvent
		for _, e := range rec.Taint {
			if want[e.DecisionID] {
				cleared = append(cleared, e)
			} else {
				kept = append(kept, e)
			}
		}
		if len(cleared) == 0 {
			nothing = fmt.Errorf("sessions: none of the given taint events is on session %q (cleared already?): %w", id, ErrNothingToClear)
			return noWrite, nil
		}
		rec.Epoch++
		ev := ClearEvent{At: at.UTC(), By: by, Reason: reason, Epoch: rec.Epoch, Taint: cleared, Remaining: len(kept)}
		if len(kept) == 0 {
			ev.Refused, rec.Refused = rec.Refused, 0
			ev.Dropped, rec.TaintDropped = rec.TaintDropped, 0
		}
		rec.Taint = kept
		rec.Cleared = append(rec.Cleared, ev)
		return durableWrite, nil
	})
	if err != nil {
		return Record{}, err
	}
	rec.Stale = rec.stale()
	return rec, nothing
}

// GCPolicy says which sessions GC removes.
type GCPolicy struct {
	// StaleAge: a client-derived session whose client process is gone is
	// removed once it was last updated at least this long ago (0: at once),
	// whatever its taint. No new client can get its ID (the ID holds the
	// process's start time), so removing it launders nothing; its taint
	// decisions stay in the audit trail. A delay lets `airlock status` show
	// a stale session for a while before it goes.
	StaleAge time.Duration
	// NamedAge: a named session (AIRLOCK_SESSION) is removed when it is
	// clean and was last updated more than NamedAge ago. A tainted named
	// session is kept until a person clears it, whatever its age: the next
	// process to use the name would otherwise start clean. Must be positive.
	NamedAge time.Duration
}

// GC removes the sessions nobody can use any more, as p says, and returns
// them. Each removal happens under the session's lock, which is removed
// with it; leftover temporary files of crashed writers are removed too.
// Files that cannot be read are reported in the error and left alone.
func (s *Store) GC(p GCPolicy, now time.Time) (removed []Record, err error) {
	if p.NamedAge <= 0 {
		return nil, fmt.Errorf("sessions: GC needs a positive age for named sessions, not %s", p.NamedAge)
	}
	entries, err := os.ReadDir(s.sdir)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	bases := map[string][]string{} // base -> temporary files
	for _, e := range entries {
		name := e.Name()
		if len(name) < 64 || !isBase(name[:64]) {
			continue
		}
		switch rest := name[64:]; {
		case rest == ".json" || rest == ".lock":
			bases[name[:64]] = bases[name[:64]]
		case strings.HasPrefix(rest, ".json.tmp-"):
			bases[name[:64]] = append(bases[name[:64]], name)
		}
	}
	var errs []error
	for base, temps := range bases {
		rec, gone, err := s.collect(base, temps, p, now)
		if err != nil {
			errs = append(errs, err)
		}
		if gone {
			removed = append(removed, rec)
		}
	}
	if err := syncDir(s.sdir); err != nil {
		errs = append(errs, err)
	}
	slices.SortFunc(removed, func(a, b Record) int { return strings.Compare(a.ID, b.ID) })
	return removed, errors.Join(errs...)
}

// collect applies GC to one session under its lock.
func (s *Store) collect(base string, temps []string, p GCPolicy, now time.Time) (Record, bool, error) {
	lock, err := s.lock(context.Background(), base)
	if err != nil {
		return Record{}, false, err
	}
	defer func() {
		unlock(lock)
		lock.Close()
	}()
	// Under the lock, no writer is between creating a temporary file and
	// renaming it: any that exists was left by a crash.
	for _, t := range temps {
		if err := os.Remove(filepath.Join(s.sdir, t)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Record{}, false, fmt.Errorf("sessions: %w", err)
		}
	}
	var buf []byte
	rec, exists, err := s.readBase(base, &buf)
	if err != nil {
		return Record{}, false, err
	}
	if exists {
		rec.Stale = rec.stale()
		age := now.Sub(rec.Updated)
		drop := rec.Stale && age >= p.StaleAge || rec.Named && !rec.Tainted && age > p.NamedAge
		if !drop {
			return rec, false, nil
		}
		if err := os.Remove(s.jsonPath(base)); err != nil {
			return Record{}, false, fmt.Errorf("sessions: %w", err)
		}
	}
	// No session file: the lock file goes too. A writer waiting for it
	// notices that it was removed and takes the new one.
	if err := os.Remove(s.lockPath(base)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rec, exists, fmt.Errorf("sessions: %w", err)
	}
	return rec, exists, nil
}

func (r *Record) stale() bool {
	return !r.Named && r.Client != nil && !r.Client.Alive()
}

func isBase(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// read reads the record of id without a lock. ok is false when the session
// has no file yet.
func (s *Store) read(id string, buf *[]byte) (rec Record, ok bool, err error) {
	rec, ok, err = s.readBase(fileBase(id), buf)
	if err == nil && ok && rec.ID != id {
		return Record{}, false, fmt.Errorf("sessions: %s holds session %q, not %q", s.jsonPath(fileBase(id)), rec.ID, id)
	}
	return rec, ok, err
}

// readBase reads and checks one session file; buf is reused between calls.
func (s *Store) readBase(base string, buf *[]byte) (Record, bool, error) {
	ok, err := s.readFile(base, buf)
	if err != nil || !ok {
		return Record{}, ok, err
	}
	rec, err := s.decode(base, *buf)
	if err != nil {
		return Record{}, false, err
	}
	return rec, true, nil
}

// readFile reads the session file of base into *buf (reused). ok is false
// when there is no file.
func (s *Store) readFile(base string, buf *[]byte) (ok bool, err error) {
	path := s.jsonPath(base)
	f, err := os.OpenFile(path, openReadFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sessions: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("sessions: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("sessions: %s is not a regular file", path)
	}
	if fi.Size() > maxFileSize {
		return false, fmt.Errorf("sessions: %s is too large (%d bytes)", path, fi.Size())
	}
	b := (*buf)[:0]
	if need := int(fi.Size()) + 1; cap(b) < need {
		b = make([]byte, 0, need)
	}
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, fmt.Errorf("sessions: %w", err)
		}
		if len(b) == cap(b) {
			if len(b) > maxFileSize {
				return false, fmt.Errorf("sessions: %s is too large", path)
			}
			b = slices.Grow(b, len(b))
		}
	}
	*buf = b
	return true, nil
}

// decode parses and checks the contents of the session file of base.
func (s *Store) decode(base string, raw []byte) (Record, error) {
	path := s.jsonPath(base)
	var rec Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return Record{}, fmt.Errorf("sessions: %s: %w", path, err)
	}
	if rec.Version != FormatVersion {
		return Record{}, fmt.Errorf("sessions: %s: format version %d, want %d", path, rec.Version, FormatVersion)
	}
	if fileBase(rec.ID) != base {
		return Record{}, fmt.Errorf("sessions: %s holds session %q, whose file is another", path, rec.ID)
	}
	rec.normalize()
	return rec, nil
}

type writeMode int

const (
	noWrite      writeMode = iota
	fastWrite              // the file is fsynced, not the directory
	durableWrite           // the file and the directory are fsynced
)

// update runs fn on the current record of id under the session's lock and
// writes the record back if fn asks to. fn gets a zero record with exists
// false when the session has no file yet.
func (s *Store) update(ctx context.Context, id string, fn func(rec *Record, exists bool) (writeMode, error)) (Record, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	base := fileBase(id)
	lock, err := s.lock(ctx, base)
	if err != nil {
		return Record{}, err
	}
	defer func() {
		unlock(lock)
		lock.Close()
	}()
	var buf []byte
	rec, exists, err := s.read(id, &buf)
	if err != nil {
		return Record{}, err
	}
	if !exists {
		rec = Record{ID: id}
	}
	mode, err := fn(&rec, exists)
	if err != nil || mode == noWrite {
		return rec, err
	}
	now := time.Now().UTC()
	rec.Version, rec.ID = FormatVersion, id
	if rec.Created.IsZero() {
		rec.Created = now
	}
	rec.Updated = now
	rec.Rev++
	rec.normalize()
	if err := s.write(base, &rec, mode == durableWrite); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// write replaces the session file with rec: temporary file, fsync, rename,
// and for a durable write an fsync of the directory.
func (s *Store) write(base string, rec *Record, durable bool) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	data = append(data, '\n')
	tmp, err := os.CreateTemp(s.sdir, base+".json.tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	// Always fsync the data before the rename: a rename that reaches the
	// disk before the data would leave an empty file after a power loss,
	// and with it a session that cannot be read.
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.jsonPath(base)); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	ok = true
	if durable {
		return syncDir(s.sdir)
	}
	return nil
}

// lock takes the session's exclusive lock, waiting at most LockTimeout (or
// until ctx is done). The returned file holds the lock; unlock and close it.
func (s *Store) lock(ctx context.Context, base string) (*os.File, error) {
	timeout := s.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	deadline := time.Now().Add(timeout)
	path := s.lockPath(base)
	for {
		f, err := os.OpenFile(path, openLockFlags, 0o600)
		if err != nil {
			return nil, fmt.Errorf("sessions: %w", err)
		}
		if err := s.acquire(ctx, f, deadline); err != nil {
			return nil, fmt.Errorf("sessions: locking %s: %w", path, err)
		}
		// GC removes a lock file under its lock: holding the lock of a file
		// no longer at path excludes nobody. Start again with the new one.
		same, err := samePath(f, path)
		if same && err == nil {
			return f, nil
		}
		unlock(f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
}

// acquire locks f, waiting until deadline or until ctx is done. The wait
// is a blocking flock, which the kernel ends as soon as the holder lets go
// (polling lets newcomers starve a waiter). A wait that is given up keeps
// going in the background and lets go as soon as it gets the lock; f is
// then closed by it, not by the caller. Each background wait holds a thread
// in the kernel, so while maxBlockedWaits of them are pending (a lock holder
// is stuck), further waits poll instead. On error, f is closed.
func (s *Store) acquire(ctx context.Context, f *os.File, deadline time.Time) error {
	busy, err := tryLock(f)
	if err != nil || !busy {
		if err != nil {
			f.Close()
		}
		return err
	}
	if s.blocked.Add(1) > maxBlockedWaits {
		s.blocked.Add(-1)
		return poll(ctx, f, deadline)
	}
	done := make(chan error, 1)
	go func() {
		done <- lockWait(f)
		s.blocked.Add(-1)
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var why error
	select {
	case err := <-done:
		if err != nil {
			f.Close()
		}
		return err
	case <-ctx.Done():
		why = ctx.Err()
	case <-timer.C:
		why = errLockTimeout
	}
	go func() {
		if err := <-done; err == nil {
			unlock(f)
		}
		f.Close()
	}()
	return why
}

// maxBlockedWaits bounds the blocking lock waits of one Store.
const maxBlockedWaits = 16

// poll tries the lock until deadline, sleeping a little longer each time.
func poll(ctx context.Context, f *os.File, deadline time.Time) error {
	wait := 50 * time.Microsecond
	for {
		busy, err := tryLock(f)
		if err != nil || !busy {
			if err != nil {
				f.Close()
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			f.Close()
			return err
		}
		if time.Now().After(deadline) {
			f.Close()
			return errLockTimeout
		}
		time.Sleep(wait)
		wait = min(2*wait, 5*time.Millisecond)
	}
}

var errLockTimeout = errors.New("still locked by another process (timed out)")

func samePath(f *os.File, path string) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("sessions: %w", err)
	}
	now, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sessions: %w", err)
	}
	a, ok1 := idOf(held)
	b, ok2 := idOf(now)
	return ok1 && ok2 && a == b, nil
}

func syncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sessions: syncing %s: %w", path, err)
	}
	return nil
}
