package sessions_test

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/airlock-dev/airlock/pep/sessions"
)

func needProc(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
}

func TestParentClient(t *testing.T) {
	needProc(t)
	c, err := sessions.ParentClient()
	require.NoError(t, err)
	assert.Equal(t, os.Getppid(), c.PID)
	assert.NotZero(t, c.StartTime)
	assert.NotEmpty(t, c.Cmdline)
	assert.True(t, c.Alive())
	assert.Regexp(t, `^client-[0-9]+-[0-9]+$`, sessions.ClientSessionID(c))

	me, err := sessions.ProcessClient(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, me.StartTime, c.StartTime, "a child starts after its parent")
	assert.Contains(t, me.Cmdline, os.Args[0])
}

func TestAlive(t *testing.T) {
	needProc(t)
	me, err := sessions.ProcessClient(os.Getpid())
	require.NoError(t, err)

	// A process that was killed but not yet reaped (a zombie) is gone.
	sleeper := exec.Command("sleep", "60")
	require.NoError(t, sleeper.Start())
	zombie, err := sessions.ProcessClient(sleeper.Process.Pid)
	require.NoError(t, err)
	require.True(t, zombie.Alive())
	require.NoError(t, sleeper.Process.Kill())
	require.Eventually(t, func() bool { return !zombie.Alive() }, 5*time.Second, time.Millisecond)
	_ = sleeper.Wait()

	// A process that ran and was reaped.
	exited := exec.Command("true")
	require.NoError(t, exited.Start())
	pid := exited.Process.Pid
	require.NoError(t, exited.Wait())

	other := *me
	other.StartTime++

	tests := []struct {
		name   string
		client *sessions.Client
		alive  bool
	}{
		{"this process", me, true},
		{"a process that exited", &sessions.Client{PID: pid, StartTime: me.StartTime}, false},
		{"a killed process", zombie, false},
		{"this PID with another start time (a reused PID)", &other, false},
		{"no start time: the PID alone, alive", &sessions.Client{PID: os.Getpid()}, true},
		{"no start time: the PID alone, gone", &sessions.Client{PID: zombie.PID}, false},
		{"PID 0", &sessions.Client{}, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.alive, tt.client.Alive())
		})
	}

	assert.NotEqual(t, sessions.ClientSessionID(me), sessions.ClientSessionID(&other), "a reused PID is another session")
	_, err = sessions.ProcessClient(pid)
	assert.Error(t, err)
	_, err = sessions.ProcessClient(0)
	assert.Error(t, err)
}
