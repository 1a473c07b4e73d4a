package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airlock-dev/airlock/pep"
	"github.com/airlock-dev/airlock/pep/sessions"
)

// DefaultSessionMaxAge is how long a stale session is kept before `airlock
// run` removes it on its own.
const DefaultSessionMaxAge = 7 * 24 * time.Hour

func stateFlags(fs *pflag.FlagSet) {
	fs.String("state-dir", "", "state directory (default: $XDG_STATE_HOME/airlock)")
}

func openStore(c *config) (*sessions.Store, error) {
	dir, err := c.stateDir()
	if err != nil {
		return nil, err
	}
	store, err := sessions.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	return store, nil
}

// loadStore resolves the configuration and opens the session store, for
// the commands that work on sessions.
func loadStore(cmd *cobra.Command) (*config, *sessions.Store, error) {
	c, err := loadConfig(cmd)
	if err != nil {
		return nil, nil, &exitError{code: pep.ExitUsage, err: err}
	}
	store, err := openStore(c)
	if err != nil {
		return nil, nil, &exitError{code: pep.ExitInternal, err: err}
	}
	return c, store, nil
}

func newStatusCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each session: its client, whether it is tainted, by what, and what was refused since",
		Long: `status lists the sessions in the state directory. A session is one MCP
client's lifetime, shared by every airlock that client started: by default the
client process (the airlock's parent), or AIRLOCK_SESSION when it is set.

To find the session of your client, look for its command line here: the
terminal you type in is not the client, so its process ID is not the one to
look for.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, store, err := loadStore(cmd)
			if err != nil {
				return err
			}
			records, err := store.List()
			if err != nil {
				return &exitError{code: pep.ExitInternal, err: err}
			}
			sortRecords(records)
			out := cmd.OutOrStdout()
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return writeJSON(out, statusJSON(records))
			}
			if len(records) == 0 {
				fmt.Fprintln(out, "no sessions")
				return nil
			}
			for i, r := range records {
				if i > 0 {
					fmt.Fprintln(out)
				}
				describeSession(out, r, time.Now())
			}
			return nil
		},
	}
	cmd.Flags().Bool("json", false, "print JSON for scripts")
	stateFlags(cmd.Flags())
	return cmd
}

func newClearCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "clear [SESSION] --reason \"...\"",
		Short: "Clear a session's taint, after showing what tainted it; records who, when and why",
		Long: `clear shows what tainted the session, then clears it, recording who cleared
it, when and why in the audit trail. SESSION is a session ID or the process ID
of a live client (see airlock status); it defaults to AIRLOCK_SESSION.

Without --reason on a terminal, clear asks for one. Read what tainted the
session before you give it: a cleared session lets the agent send, post and
write again.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, store, err := loadStore(cmd)
			if err != nil {
				return err
			}
			return clearSession(cmd, c, store, args)
		},
	}
	fs := cmd.Flags()
	fs.String("reason", "", "why it is safe to clear (recorded in the audit trail)")
	fs.Bool("json", false, "print JSON for scripts (needs --reason)")
	fs.String("audit", "", `audit log file ("-" for stderr; default: STATE_DIR/audit.jsonl)`)
	fs.String("session", "", "session ID (default: AIRLOCK_SESSION)")
	stateFlags(fs)
	return cmd
}

func newGCCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove stale sessions (their client is gone)",
		Long: `gc removes the sessions whose client process has exited: no client can use
them again, since a new client is a new session. A named session
(AIRLOCK_SESSION) is removed only when it is clean and older than --max-age: a
tainted one stays until a person clears it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, store, err := loadStore(cmd)
			if err != nil {
				return err
			}
			maxAge, _ := cmd.Flags().GetDuration("max-age")
			removed, err := store.GC(sessions.GCPolicy{NamedAge: maxAge}, time.Now())
			if err != nil {
				return &exitError{code: pep.ExitInternal, err: err}
			}
			out := cmd.OutOrStdout()
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return writeJSON(out, statusJSON(removed))
			}
			for _, r := range removed {
				fmt.Fprintf(out, "removed %s (%s)\n", r.ID, clientLine(r))
			}
			fmt.Fprintf(out, "%d stale session(s) removed\n", len(removed))
			return nil
		},
	}
	cmd.Flags().Duration("max-age", DefaultSessionMaxAge, "age after which a clean named session is removed")
	cmd.Flags().Bool("json", false, "print JSON for scripts")
	stateFlags(cmd.Flags())
	return cmd
}

func clearSession(cmd *cobra.Command, c *config, store *sessions.Store, args []string) error {
	out := cmd.OutOrStdout()
	asJSON, _ := cmd.Flags().GetBool("json")
	reason, _ := cmd.Flags().GetString("reason")
	id := c.Session
	if len(args) == 1 {
		id = args[0]
	}
	if id == "" {
		return &exitError{code: pep.ExitUsage, err: errors.New("which session? Give its ID or its client's process ID (airlock status lists them), or set AIRLOCK_SESSION")}
	}
	rec, err := findSession(store, id)
	if err != nil {
		return &exitError{code: pep.ExitUsage, err: err}
	}
	if !asJSON {
		describeSession(out, rec, time.Now())
		fmt.Fprintln(out)
	}
	if !rec.Tainted {
		if asJSON {
			return writeJSON(out, clearJSON{Session: statusOf(rec), Cleared: false, Message: "not tainted; nothing to clear"})
		}
		fmt.Fprintln(out, "The session is not tainted; nothing to clear.")
		return nil
	}
	if reason == "" {
		if asJSON || !isTerminal(cmd.InOrStdin()) {
			return &exitError{code: pep.ExitUsage, err: errors.New(`--reason "..." is required: say why it is safe to clear (it is recorded in the audit trail)`)}
		}
		fmt.Fprint(out, "Why is it safe to clear this session? (recorded in the audit trail)\nreason: ")
		line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
		reason = strings.TrimSpace(line)
		if reason == "" {
			if err != nil && !errors.Is(err, io.EOF) {
				return &exitError{code: pep.ExitInternal, err: err}
			}
			return &exitError{code: pep.ExitUsage, err: errors.New("no reason given; the session stays tainted")}
		}
	}

	taintIDs := make([]string, len(rec.Taint))
	for i, t := range rec.Taint {
		taintIDs[i] = t.DecisionID
	}
	by := whoAmI()
	now := time.Now().UTC()
	after, err := store.Clear(rec.ID, taintIDs, by, reason, now)
	if errors.Is(err, sessions.ErrNothingToClear) {
		// Another clear got there first, between showing and clearing.
		if asJSON {
			return writeJSON(out, clearJSON{Session: statusOf(after), Cleared: false, Message: err.Error()})
		}
		fmt.Fprintf(out, "Nothing cleared: %v.\n", err)
		if after.Tainted {
			describeSession(out, after, time.Now())
			return &exitError{code: pep.ExitInternal}
		}
		return nil
	}
	if err != nil {
		return &exitError{code: pep.ExitInternal, err: err}
	}
	cleared := rec.Taint
	if n := len(after.Cleared); n > 0 {
		cleared = after.Cleared[n-1].Taint // what this clear removed
	}
	auditLog, closeAudit, err := openAudit(c)
	if err != nil {
		return &exitError{code: pep.ExitInternal, err: fmt.Errorf("the session was cleared, but the audit trail cannot be written: %w", err)}
	}
	defer closeAudit()
	decisionID := pep.NewDecisionID()
	if _, err := auditLog.Append(clearRecord{
		Time: now.Format(time.RFC3339Nano), DecisionID: decisionID, Session: rec.ID, Action: "clear",
		By: by, Reason: reason, Cleared: cleared, StillTainted: after.Tainted,
	}); err != nil {
		return &exitError{code: pep.ExitInternal, err: fmt.Errorf("the session was cleared, but the audit record failed: %w", err)}
	}
	if asJSON {
		return writeJSON(out, clearJSON{Session: statusOf(after), Cleared: true, DecisionID: decisionID, By: by, Reason: reason})
	}
	if after.Tainted {
		fmt.Fprintf(out, "Cleared what you saw, but the session was tainted again meanwhile:\n")
		describeSession(out, after, time.Now())
		return &exitError{code: pep.ExitInternal}
	}
	fmt.Fprintf(out, "Cleared by %s (audit decision %s). Outbound tools work again until the next untrusted result.\n", by, decisionID)
	return nil
}

// findSession resolves a session ID, or the process ID of a live client.
func findSession(store *sessions.Store, id string) (sessions.Record, error) {
	rec, err := store.Get(id)
	if err == nil {
		return rec, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return sessions.Record{}, err
	}
	if pid, convErr := strconv.Atoi(id); convErr == nil {
		records, err := store.List()
		if err != nil {
			return sessions.Record{}, err
		}
		var found []sessions.Record
		for _, r := range records {
			if r.Client != nil && r.Client.PID == pid && !r.Stale {
				found = append(found, r)
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
		if len(found) > 1 {
			return sessions.Record{}, fmt.Errorf("client %d has %d sessions; give the session ID (airlock status)", pid, len(found))
		}
	}
	return sessions.Record{}, fmt.Errorf("no session %q (airlock status lists them)", id)
}

// describeSession writes what a person needs to decide, at a glance.
func describeSession(w io.Writer, r sessions.Record, now time.Time) {
	fmt.Fprintf(w, "session %s\n", r.ID)
	fmt.Fprintf(w, "  client   %s\n", clientLine(r))
	if !r.Tainted {
		fmt.Fprintf(w, "  state    clean")
		if n := len(r.Cleared); n > 0 {
			last := r.Cleared[n-1]
			fmt.Fprintf(w, " (cleared %s by %s: %q)", ago(last.At, now), last.By, last.Reason)
		}
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "  state    TAINTED: outbound tools are refused\n")
	for i, t := range r.Taint {
		label := "by"
		if i > 0 {
			label = "and"
		}
		why := ""
		if len(t.Rules) > 0 {
			why = ", " + strings.Join(t.Rules, ", ")
		}
		fmt.Fprintf(w, "  %-8s %s/%s, %s (decision %s%s)\n", label, t.Server, t.Tool, ago(t.At, now), t.DecisionID, why)
	}
	fmt.Fprintf(w, "  refused  %d call(s) since\n", r.Refused)
	fmt.Fprintf(w, "  clear    airlock clear %s --reason \"...\"\n", quoteArg(r.ID))
}

func clientLine(r sessions.Record) string {
	var parts []string
	if r.Named {
		parts = append(parts, "named session (AIRLOCK_SESSION)")
	}
	if r.Client != nil {
		s := fmt.Sprintf("pid %d", r.Client.PID)
		if r.Client.Cmdline != "" {
			s += ": " + r.Client.Cmdline
		}
		parts = append(parts, s)
	}
	if r.Stale {
		parts = append(parts, "client gone (stale; airlock gc removes it)")
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}

func ago(t, now time.Time) string {
	d := now.Sub(t).Round(time.Second)
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format("2006-01-02 15:04:05Z"), d)
}

func quoteArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func sortRecords(rs []sessions.Record) {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Tainted != rs[j].Tainted {
			return rs[i].Tainted
		}
		return rs[i].Updated.After(rs[j].Updated)
	})
}

// whoAmI names the person clearing: user name, uid and host.
func whoAmI() string {
	name := os.Getenv("USER")
	uid := strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil {
		name, uid = u.Username, u.Uid
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s (uid %s) on %s", name, uid, host)
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// sessionJSON is a session as scripts see it.
type sessionJSON struct {
	sessions.Record
	Stale bool `json:"stale"`
}

func statusOf(r sessions.Record) sessionJSON { return sessionJSON{Record: r, Stale: r.Stale} }

func statusJSON(rs []sessions.Record) []sessionJSON {
	out := make([]sessionJSON, len(rs))
	for i, r := range rs {
		out[i] = statusOf(r)
	}
	return out
}

type clearJSON struct {
	Session    sessionJSON `json:"session"`
	Cleared    bool        `json:"cleared"`
	DecisionID string      `json:"decision_id,omitempty"`
	By         string      `json:"by,omitempty"`
	Reason     string      `json:"reason,omitempty"`
	Message    string      `json:"message,omitempty"`
}

// clearRecord is the audit record of a clear.
type clearRecord struct {
	Time         string           `json:"time"`
	DecisionID   string           `json:"decision_id"`
	Session      string           `json:"session"`
	Action       string           `json:"action"`
	By           string           `json:"by"`
	Reason       string           `json:"reason"`
	Cleared      []pep.TaintEvent `json:"cleared"`
	StillTainted bool             `json:"still_tainted"`
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
