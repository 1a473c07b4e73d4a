//go:build unix

package sessions

import (
	"errors"
	"os"
	"syscall"
)

// Flags for opening a session or lock file: never through a symlink put in
// the directory, never blocking on a FIFO put there.
const (
	openReadFlags = os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	openLockFlags = os.O_RDWR | os.O_CREATE | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC
)

// tryLock takes an exclusive flock without waiting. flock locks belong to
// the open file description, so two handles of one process exclude each
// other just like two processes do. busy is true when another holds it.
func tryLock(f *os.File) (busy bool, err error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return true, nil
		default:
			return false, err
		}
	}
}

// lockWait waits for an exclusive flock.
func lockWait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func unlock(f *os.File) {
	// Closing the file releases it too; nothing useful to do on error.
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// fileID is what identifies a file: a lock file replaced under a waiter is
// another file.
type fileID struct{ dev, ino uint64 }

func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, true // Dev is not uint64 everywhere
}

// ownedByUs reports whether the file belongs to this process's user.
func ownedByUs(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// pidExists reports whether a process with the PID exists (signal 0 checks
// without sending anything; EPERM means it exists as another user's).
func pidExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
