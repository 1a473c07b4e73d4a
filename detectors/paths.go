package detectors

// FindPaths returns the filesystem paths s names, normalized, with the
// protected-path globs of opts each one matches. field is the property name
// s stood in. The caller fills PathHit.Arg and PathHit.Decoded.
func FindPaths(field, s string, opts Options) []PathHit {
	return nil // replaced by the paths detector
}
