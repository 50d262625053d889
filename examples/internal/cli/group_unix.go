//go:build unix

package cli

import (
	"os/exec"
	"syscall"
)

// KillGroupOnCancel runs cmd in a process group of its own, which
// cancelling its context kills: cmd and every process it started, such as
// the program strace traces, which outlives a killed strace otherwise.
func KillGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
