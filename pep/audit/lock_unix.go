//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package audit

import (
	"errors"
	"syscall"
)

// lockFile takes an exclusive flock. flock locks belong to the open file
// description, so two Writers of one process exclude each other just like
// two processes do.
func lockFile(fd int) error {
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func unlockFile(fd int) {
	// Closing the file would release it too; nothing useful to do on error.
	_ = syscall.Flock(fd, syscall.LOCK_UN)
}

// fileSize uses fstat directly: os.File.Stat allocates a FileInfo per call.
func fileSize(fd int) (int64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Size, nil
}
