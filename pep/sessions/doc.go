// Package sessions is airlock's durable session store: the taint of a
// client session, shared by every airlock process of that client (one per
// MCP server) and kept on disk until a person clears it.
//
// # Sessions
//
// A session is client-derived by default: its ID is ClientSessionID of the
// client process (airlock's parent, ParentClient), "client-<pid>-<start>",
// where start is the process's start time from /proc, so a reused PID is a
// new session. Or it is named (AIRLOCK_SESSION): any other string, shared by
// every process that uses the name, now and later. Store.Session returns
// the handle one airlock process uses; it implements pep.Session.
//
// # Layout
//
// The store lives in a state directory (AIRLOCK_STATE_DIR), mode 0700, and
// keeps under DIR/sessions/ (0700), for each session:
//
//	H.json            the session record: Record as JSON, one line, mode 0600
//	H.lock            the lock file that writers flock (empty, mode 0600)
//	H.json.tmp-NNNN   a new version being written (renamed over H.json)
//
// where H is the hex SHA-256 of the session ID: any string is a valid ID and
// none becomes a path. The record holds its ID; a file whose ID does not
// hash to its name, that is not a regular file (a symlink, a FIFO), that is
// not JSON or not FormatVersion, is an error for every reader and writer of
// that session: the proxy fails closed until a person removes it.
//
// Open creates the directories. If one exists with other permissions it is
// set to 0700 and Store.Warnings says so (log it); one that belongs to
// another user is an error.
//
// # Writing and reading
//
// Every update is a read-modify-write under an exclusive flock(2) on H.lock:
// the new record is written to a temporary file in the same directory,
// fsynced, and renamed over H.json. Readers take no lock: a rename replaces
// the file whole, so a reader sees one version or the next, never a torn
// one. Taint and Clear fsync the directory too before they return, so the
// taint (or the clear) survives a crash or a power loss: the proxy delivers
// an untrusted result only after Taint has returned, so whichever airlock an
// outbound call goes through next, it reads the taint. Refused fsyncs the
// file but not the directory: after a power loss the previous version may
// come back, with its taint; only the count is lost. (The file is fsynced
// even then: a rename that reached the disk before the data would leave an
// empty, unreadable session file.)
//
// Session.State reads the file on every call, since another process may
// have tainted or cleared the session a moment ago; when the bytes are those
// it decoded last time it does not decode them again (about 3.5 µs for a
// typical session). A writer waits at most Store.LockTimeout (default 10s)
// for the lock, then fails (the proxy then fails closed) rather than hang
// behind a lock holder that was stopped.
//
// The directory must be on a local file system, shared only by processes
// of one PID namespace (client identities are PIDs).
//
// # Clearing
//
// Only Store.Clear clears. It removes the taint events a person saw and
// named, keeps any that arrived since, records who, why and what in a
// ClearEvent, and increments the session's Epoch. No pep.Session method
// clears, so nothing the model does through a proxy can.
//
// # Deletion and rollback
//
// A Session handle remembers the last record it read or wrote. If the file
// later lost taint the handle saw without a clear (its revision went back,
// or it says clean at an epoch no later than the one at which the handle
// saw the taint), it was deleted or an old copy was put back, say by a
// filesystem tool the model drives: the handle stays tainted, writes the
// taint back to disk so other processes see it again, and reports a
// RollbackError (Session.OnRollback, Session.Rollbacks).
//
// The limits: only a handle that saw the taint can restore it, and it does
// so on its next read or write. A process that starts after the file was
// deleted, before then, sees a clean session; once every process that saw
// the taint has exited, nothing restores it. Anyone who can write the state directory can also forge a record
// (a higher revision and epoch, a fake clear). Keep the state directory out
// of reach of the tools the model drives; this check catches the clumsy
// attempt, not the careful one. (The audit trail keeps every taint decision.)
//
// A handle that saw taint, missed the clear of a named session, and then
// reads nothing until GC has removed it (clean and older than maxAge)
// restores the cleared taint: a false alarm that fails closed.
//
// # Removal
//
// Store.GC removes a client-derived session whose client is gone, whatever
// its age or taint (no new client can get its ID), and a named session that
// is clean and was not updated for maxAge. A tainted named session is kept
// until a person clears it: removing it would hand the next process that
// uses the name a clean session.
//
// # Bounded size
//
// A record keeps at most MaxTaint taint events (the first and the latest;
// TaintDropped counts the rest), MaxCleared clears and MaxClearedEvents
// cleared events in its history. Records are capped when read, too, so a
// long-lived handle, or a file written by hand, cannot grow memory without
// bound.
package sessions
