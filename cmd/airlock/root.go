package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/airlock-dev/airlock/pep"
)

// config is everything a command reads from flags, AIRLOCK_* variables and
// the config file, in that order of precedence.
type config struct {
	Server         string        `mapstructure:"server"`
	Policy         string        `mapstructure:"policy"`
	Data           string        `mapstructure:"data"`
	Audit          string        `mapstructure:"audit"`
	AuditArguments string        `mapstructure:"audit_arguments"`
	MaxFrameBytes  int           `mapstructure:"max_frame_bytes"`
	Grace          time.Duration `mapstructure:"grace"`
	LogLevel       string        `mapstructure:"log_level"`
	Session        string        `mapstructure:"session"`
	SessionMaxAge  time.Duration `mapstructure:"session_max_age"`
	StateDir       string        `mapstructure:"state_dir"`
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "airlock",
		Short:         "A policy enforcement point for MCP tool calls",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("config", "", "YAML config file (keys as the long flag names, with _ for -)")
	root.AddCommand(newRunCommand(), newStatusCommand(), newClearCommand(), newGCCommand(),
		newEvalCommand(), newAuditCommand(), newVersionCommand())
	return root
}

// policyFlags are the flags of every command that loads a policy.
func policyFlags(fs *pflag.FlagSet) {
	fs.StringP("policy", "p", "", "policy bundle: a directory or .tar.gz (default: the embedded bundle)")
	fs.String("data", "", "JSON data file laid over the bundle's data (an mcp-gate policy file works as is)")
}

// loadConfig resolves the configuration of one command invocation. Each
// invocation has its own viper instance: no global state.
func loadConfig(cmd *cobra.Command) (*config, error) {
	v := viper.New()
	v.SetEnvPrefix("AIRLOCK")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	v.SetDefault("max_frame_bytes", pep.DefaultMaxFrameBytes)
	v.SetDefault("grace", pep.DefaultGrace)
	v.SetDefault("audit_arguments", "hash")
	v.SetDefault("log_level", "info")
	v.SetDefault("session_max_age", DefaultSessionMaxAge)
	// Keys with no default must still be known to viper so that their
	// AIRLOCK_* variables are read when the struct is filled.
	for _, key := range []string{"server", "policy", "data", "audit", "session", "state_dir"} {
		v.SetDefault(key, "")
	}
	var bindErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "config" || f.Name == "help" {
			return
		}
		if err := v.BindPFlag(strings.ReplaceAll(f.Name, "-", "_"), f); err != nil && bindErr == nil {
			bindErr = err
		}
	})
	if bindErr != nil {
		return nil, bindErr
	}
	file, _ := cmd.Flags().GetString("config")
	if file == "" {
		file = os.Getenv("AIRLOCK_CONFIG")
	}
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("config %s: %w", file, err)
		}
	}
	var c config
	if err := v.Unmarshal(&c); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return &c, nil
}

// stateDir is where airlock keeps state shared by the processes of a user:
// AIRLOCK_STATE_DIR, else $XDG_STATE_HOME/airlock, else ~/.local/state/airlock.
func (c *config) stateDir() (string, error) {
	if c.StateDir != "" {
		return c.StateDir, nil
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "airlock"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: set AIRLOCK_STATE_DIR: %w", err)
	}
	return filepath.Join(home, ".local", "state", "airlock"), nil
}

func (c *config) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", c.LogLevel, err)
	}
	h := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	return slog.New(h).With("airlock", c.Server), nil
}
