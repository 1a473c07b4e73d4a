//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package audit

import (
	"errors"
	"fmt"
	"runtime"
)

// Without flock, processes sharing a file would fork the chain; refuse
// rather than write a log that later fails verification. New still works.
func lockFile(int) error {
	return fmt.Errorf("file locking not supported on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func unlockFile(int) {}

func fileSize(int) (int64, error) {
	return 0, errors.ErrUnsupported
}
